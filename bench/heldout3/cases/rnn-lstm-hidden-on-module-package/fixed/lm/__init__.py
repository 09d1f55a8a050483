from .model import *
from .data import *
from .trainer import train_epoch, evaluate
