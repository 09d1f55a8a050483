import torch.nn.functional as F


def discriminator_loss(netD, real, fake):
    """Hinge loss for the discriminator."""
    return F.relu(1.0 - netD(real)).mean() + F.relu(1.0 + netD(fake)).mean()


def generator_loss(netD, fake):
    """Hinge loss for the generator."""
    return -netD(fake).mean()
