from .moco import MoCo

__all__ = ["MoCo"]
