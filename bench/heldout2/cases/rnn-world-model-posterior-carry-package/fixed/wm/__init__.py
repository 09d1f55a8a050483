from .rssm import LatentDynamics
from .data import sequence_batches
from .loop import train_world_model

__all__ = ["LatentDynamics", "sequence_batches", "train_world_model"]
