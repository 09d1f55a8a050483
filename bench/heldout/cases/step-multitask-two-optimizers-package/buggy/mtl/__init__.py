from .models import MultiHeadNet
from .optim import make_optimizers

__all__ = ["MultiHeadNet", "make_optimizers"]
