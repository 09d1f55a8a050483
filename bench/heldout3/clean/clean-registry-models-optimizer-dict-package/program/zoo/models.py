import torch
import torch.nn as nn

from .registry import register


@register("mlp")
class MLP(nn.Module):
    def __init__(self, n_in, n_out, width=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, width), nn.ReLU(), nn.Linear(width, n_out))

    def forward(self, x):
        return self.net(x)


@register("resmlp")
class ResMLP(nn.Module):
    def __init__(self, n_in, n_out, width=32, depth=2):
        super().__init__()
        self.inp = nn.Linear(n_in, width)
        self.blocks = nn.ModuleList(nn.Sequential(nn.LayerNorm(width), nn.Linear(width, width), nn.GELU())
                                    for _ in range(depth))
        self.out = nn.Linear(width, n_out)

    def forward(self, x):
        h = self.inp(x)
        for blk in self.blocks:
            h = h + blk(h)
        return self.out(h)


@register("linear")
class Linear(nn.Module):
    def __init__(self, n_in, n_out, **_):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)

    def forward(self, x):
        return self.fc(torch.flatten(x, 1))
