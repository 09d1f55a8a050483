from .heads import build_heads, Encoder
from .trainer import MultiHeadTrainer
