"""Non-parametric instance discrimination: a memory bank of per-sample embeddings."""

from .memory import MemoryBank

__all__ = ["MemoryBank"]
