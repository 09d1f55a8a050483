from .engine import train_epoch, evaluate
from .attacks import fgsm
