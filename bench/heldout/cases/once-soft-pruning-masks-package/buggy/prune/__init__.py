from .model import MaskedMLP

__all__ = ["MaskedMLP"]
