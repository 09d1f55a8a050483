import torch.nn as nn


def define_G(dim, hidden=32):
    return nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(True), nn.Linear(hidden, hidden), nn.ReLU(True),
                         nn.Linear(hidden, dim), nn.Tanh())


def define_D(dim, hidden=32):
    return nn.Sequential(nn.Linear(dim, hidden), nn.LeakyReLU(0.2, True), nn.Linear(hidden, 1))
