from .penalty import gradient_penalty
from .nets import build_critic, build_generator
from .loop import train
