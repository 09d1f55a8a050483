from .model import CycleGANModel

__all__ = ["CycleGANModel"]
