import torch.nn as nn


def mlp(sizes, out_act=None):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    if out_act is not None:
        layers.append(out_act)
    return nn.Sequential(*layers)


class Encoder(nn.Module):
    def __init__(self, x_dim=10, z_dim=2):
        super().__init__()
        self.net = mlp([x_dim, 32, z_dim])

    def forward(self, x):
        return self.net(x)


class Decoder(nn.Module):
    def __init__(self, x_dim=10, z_dim=2):
        super().__init__()
        self.net = mlp([z_dim, 32, x_dim])

    def forward(self, z):
        return self.net(z)


class LatentCritic(nn.Module):
    """Tells codes drawn from the prior (label 1) from codes produced by the encoder (label 0)."""

    def __init__(self, z_dim=2):
        super().__init__()
        self.net = mlp([z_dim, 32, 1])

    def forward(self, z):
        return self.net(z).squeeze(-1)
