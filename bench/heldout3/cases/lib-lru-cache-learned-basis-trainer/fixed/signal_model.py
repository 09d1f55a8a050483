import functools
import math

import torch
import torch.nn as nn


class LearnedFourierRegressor(nn.Module):
    """Predicts a length-n curve as a mixture of cosines with learned frequencies and phases."""

    def __init__(self, n_in, n_basis=8):
        super().__init__()
        self.freqs = nn.Parameter(torch.linspace(0.5, 4.0, n_basis))
        self.phases = nn.Parameter(torch.zeros(n_basis))
        self.coef = nn.Sequential(nn.Linear(n_in, 32), nn.Tanh(), nn.Linear(32, n_basis))

    def basis(self, n):
        t = torch.linspace(0, 2 * math.pi, n)
        return torch.cos(self.freqs[:, None] * t[None, :] + self.phases[:, None])

    def forward(self, x, n):
        return self.coef(x) @ self.basis(n)
