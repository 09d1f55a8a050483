from .models import Critic, Generator
from .engine import fit
