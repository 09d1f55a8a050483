import torch.nn as nn
from torch.nn.utils import spectral_norm


def generator(nz=4, out=2, h=32):
    return nn.Sequential(nn.Linear(nz, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(), nn.Linear(h, out))


def discriminator(inp=2, h=32):
    return nn.Sequential(spectral_norm(nn.Linear(inp, h)), nn.LeakyReLU(0.2),
                         spectral_norm(nn.Linear(h, h)), nn.LeakyReLU(0.2), spectral_norm(nn.Linear(h, 1)))
