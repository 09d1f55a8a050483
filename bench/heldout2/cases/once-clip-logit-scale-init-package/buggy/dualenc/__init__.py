from .model import DualEncoder
from .trainer import ContrastiveTrainer

__all__ = ["DualEncoder", "ContrastiveTrainer"]
