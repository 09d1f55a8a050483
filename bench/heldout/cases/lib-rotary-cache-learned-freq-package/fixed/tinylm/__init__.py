from .model import TinyLM

__all__ = ["TinyLM"]
