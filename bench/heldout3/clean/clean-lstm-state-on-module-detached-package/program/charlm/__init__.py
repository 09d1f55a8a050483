from .model import CharLSTM
from .loop import fit
