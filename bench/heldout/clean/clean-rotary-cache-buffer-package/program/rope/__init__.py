from .layers import RotaryAttention

__all__ = ["RotaryAttention"]
