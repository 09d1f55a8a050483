import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, in_dim=16, latent=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, 32), nn.ReLU())
        self.mu = nn.Linear(32, latent)
        self.logvar = nn.Linear(32, latent)

    def forward(self, x):
        h = self.net(x)
        return self.mu(h), self.logvar(h)


class Decoder(nn.Module):
    def __init__(self, latent=4, out_dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent, 32), nn.ReLU(), nn.Linear(32, out_dim))

    def forward(self, z):
        return self.net(z)


def freeze(module):
    for p in module.parameters():
        p.requires_grad_(False)
    module.eval()
    return module
