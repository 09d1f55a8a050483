import torch
import torch.nn as nn


class AffineCoupling(nn.Module):
    """RealNVP coupling: half of the dimensions are scaled and shifted as a function of the other half."""

    def __init__(self, dim, flip, hidden=32):
        super().__init__()
        self.flip = flip
        half = dim // 2
        self.net = nn.Sequential(nn.Linear(half, hidden), nn.Tanh(), nn.Linear(hidden, 2 * (dim - half)))

    def forward(self, x):
        a, b = x.chunk(2, dim=-1)
        if self.flip:
            a, b = b, a
        s, t = self.net(a).chunk(2, dim=-1)
        s = torch.tanh(s)
        b = b * torch.exp(s) + t
        out = torch.cat([b, a], dim=-1) if self.flip else torch.cat([a, b], dim=-1)
        return out, s.sum(-1)


class RealNVP(nn.Module):
    def __init__(self, dim=2, n_layers=4):
        super().__init__()
        self.layers = nn.ModuleList(AffineCoupling(dim, flip=i % 2 == 1) for i in range(n_layers))

    def forward(self, x):
        """Maps data to the latent space; returns z and the log-determinant of the Jacobian."""
        log_det = torch.zeros(x.size(0))
        for layer in self.layers:
            x, ld = layer(x)
            log_det = log_det + ld
        return x, log_det
