from .bank import MemoryBank
from .trainer import InstanceDiscriminationTrainer

__all__ = ["MemoryBank", "InstanceDiscriminationTrainer"]
