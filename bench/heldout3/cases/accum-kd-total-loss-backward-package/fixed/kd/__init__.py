from .nets import *
from .losses import *
from .loop import distill
