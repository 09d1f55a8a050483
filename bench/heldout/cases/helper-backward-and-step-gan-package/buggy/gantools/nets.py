import torch.nn as nn


def generator(nz, dim, hidden=32):
    return nn.Sequential(nn.Linear(nz, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, dim))


def discriminator(dim, hidden=32):
    return nn.Sequential(nn.Linear(dim, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 1))
