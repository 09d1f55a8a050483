from .builder import MoCo

__all__ = ["MoCo"]
