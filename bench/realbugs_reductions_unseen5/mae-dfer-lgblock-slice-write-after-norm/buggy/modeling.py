"""Local-global attention blocks (the shape of MAE-DFER's modeling_finetune.LGBlock at 8cd44d5).

Each region has one messenger token (position 0) and local tokens. The messenger tokens are read as a
reshaped view of x[:, 0], normalised (LayerNorm saves that view) and attended, then written back with
x[:, 0] = ...; the in-place slice write modifies the view the LayerNorm saved.
"""

import torch
from torch import nn

from registry import register_model


class LGBlock(nn.Module):
    def __init__(self, dim, heads=2):
        super().__init__()
        self.norm0 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x, b):
        n = x.shape[0] // b
        messenger = x[:, 0].reshape(b, n, -1)  # a view of x
        h = self.norm0(messenger)
        messenger = messenger + self.attn(h, h, h, need_weights=False)[0]
        x[:, 0] = messenger.reshape(b * n, -1)  # buggy: writes into x, and so into the saved view
        return x + self.mlp(self.norm2(x))


class RegionTransformer(nn.Module):
    def __init__(self, dim=16, depth=2, regions=3, tokens=4, num_classes=3):
        super().__init__()
        self.regions, self.tokens = regions, tokens
        self.embed = nn.Linear(8, dim)
        self.region_token = nn.Parameter(torch.zeros(regions, 1, dim))
        self.blocks = nn.ModuleList(LGBlock(dim) for _ in range(depth))
        self.head = nn.Linear(dim, num_classes)

    def forward(self, video):  # video: (b, regions * tokens, 8)
        b = video.shape[0]
        x = self.embed(video).reshape(b * self.regions, self.tokens, -1)
        x = torch.cat([self.region_token.repeat(b, 1, 1), x], dim=1)
        for blk in self.blocks:
            x = blk(x, b)
        return self.head(x[:, 1:].reshape(b, -1, x.shape[-1]).mean(dim=1))


@register_model
def region_transformer_small(**kwargs):
    return RegionTransformer(**kwargs)
