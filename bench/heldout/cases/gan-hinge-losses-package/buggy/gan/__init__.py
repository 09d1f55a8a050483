from .losses import discriminator_loss, generator_loss
from .models import Discriminator, Generator

__all__ = ["Discriminator", "Generator", "discriminator_loss", "generator_loss"]
