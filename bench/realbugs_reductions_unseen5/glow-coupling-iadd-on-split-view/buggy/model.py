"""A tiny Glow (the shape of glow/models.py at 5aa1211): 1x1 mixing, then an affine coupling whose
second half is updated in place. z2 is a view of z, and the coupling network's first convolution
saved z1, another view of z; the in-place updates bump their common version counter.
"""

import torch
from torch import nn

import ops


class FlowStep(nn.Module):
    def __init__(self, channels, hidden):
        super().__init__()
        self.mix = nn.Conv2d(channels, channels, 1, bias=False)
        self.f = nn.Sequential(nn.Conv2d(channels // 2, hidden, 3, padding=1), nn.ReLU(),
                               nn.Conv2d(hidden, channels, 3, padding=1))

    def forward(self, z, logdet):
        z = self.mix(z)
        z1, z2 = ops.split_feature(z, "split")
        h = self.f(z1)
        shift, scale = ops.split_feature(h, "cross")
        scale = torch.sigmoid(scale + 2.0)
        z2 += shift  # buggy: in place on a view of z
        z2 *= scale
        logdet = torch.log(scale).sum(dim=(1, 2, 3)) + logdet
        return ops.cat_feature(z1, z2), logdet


class Glow(nn.Module):
    def __init__(self, channels=4, hidden=16, depth=2):
        super().__init__()
        self.steps = nn.ModuleList(FlowStep(channels, hidden) for _ in range(depth))

    def forward(self, x):
        z, logdet = x, torch.zeros(x.size(0))
        for step in self.steps:
            z, logdet = step(z, logdet)
        nll = 0.5 * (z ** 2).sum(dim=(1, 2, 3)) - logdet
        return z, nll
