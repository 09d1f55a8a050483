from .engine import Engine
from .monitor import GradMonitor
