import torch.nn as nn


def build_generator(nz, dim, h=32):
    return nn.Sequential(nn.Linear(nz, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(), nn.Linear(h, dim))


def build_critic(dim, h=32):
    return nn.Sequential(nn.Linear(dim, h), nn.Tanh(), nn.Linear(h, h), nn.Tanh(), nn.Linear(h, 1))
