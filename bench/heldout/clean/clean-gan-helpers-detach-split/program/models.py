import torch.nn as nn


def make_g(nz, dim):
    return nn.Sequential(nn.Linear(nz, 32), nn.ReLU(), nn.Linear(32, dim), nn.Tanh())


def make_d(dim):
    return nn.Sequential(nn.Linear(dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32), nn.LeakyReLU(0.2),
                         nn.Linear(32, 1))
