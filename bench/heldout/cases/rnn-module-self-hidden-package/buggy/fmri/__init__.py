from .data import make_subjects
from .models import FMRILSTM

__all__ = ["FMRILSTM", "make_subjects"]
