"""Bijections (the shape of torchflows' layers_base.ElementwiseBijection, layers.ElementwiseAffine and
architectures.RealNVP at 3d4bbb8).

ElementwiseBijection builds its parameter tensor once in __init__ as `Parameter(...) / 1000.0`: the
attribute is the division's result, a non-leaf tensor with its own small graph, made once and used
by every forward. RealNVP gets its layers from a helper that appends them to a list in a loop.
"""

import torch
from torch import nn


class ElementwiseBijection(nn.Module):
    def __init__(self, dim, fill_value=None):
        super().__init__()
        if fill_value is None:
            self.value = nn.Parameter(torch.randn(2, dim) / 1000.0)  # fixed: a registered leaf parameter
        else:
            self.value = nn.Parameter(torch.full((2, dim), fill_value))

    def forward(self, x):
        h = self.value[None].repeat(x.shape[0], 1, 1)
        return x * torch.exp(h[:, 1]) + h[:, 0], h[:, 1].sum(dim=1)


class ElementwiseAffine(ElementwiseBijection):
    pass


class AffineCoupling(nn.Module):
    def __init__(self, dim, hidden=16):
        super().__init__()
        self.half = dim // 2
        out = 2 * (dim - self.half)
        self.net = nn.Sequential(nn.Linear(self.half, hidden), nn.Tanh(), nn.Linear(hidden, out))

    def forward(self, x):
        a, b = x[:, : self.half], x[:, self.half :]
        shift, log_scale = self.net(a).chunk(2, dim=1)
        return torch.cat([a, b * torch.exp(log_scale) + shift], dim=1), log_scale.sum(dim=1)


def make_basic_layers(base_bijection, dim, n_layers=2):
    bijections = [ElementwiseAffine(dim)]
    for _ in range(n_layers):
        bijections.append(base_bijection(dim))
    bijections.append(ElementwiseAffine(dim))
    return bijections


class BijectiveComposition(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = nn.ModuleList(layers)

    def forward(self, x):
        logdet = torch.zeros(x.shape[0])
        for layer in self.layers:
            x, ld = layer(x)
            logdet = logdet + ld
        return x, logdet


class RealNVP(BijectiveComposition):
    def __init__(self, dim, n_layers=2):
        super().__init__(make_basic_layers(AffineCoupling, dim, n_layers))
