import functools

import torch
import torch.nn as nn


class RelativePositionBias(nn.Module):
    """T5-style learned bias per head and clipped relative distance."""

    def __init__(self, heads, max_distance=8):
        super().__init__()
        self.max_distance = max_distance
        self.table = nn.Embedding(2 * max_distance + 1, heads)

    @functools.lru_cache(maxsize=None)
    def get_bias(self, n):
        pos = torch.arange(n)
        rel = (pos[None, :] - pos[:, None]).clamp(-self.max_distance, self.max_distance)
        return self.table(rel + self.max_distance).permute(2, 0, 1)


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3, bias=False)
        self.out = nn.Linear(dim, dim)
        self.rel_bias = RelativePositionBias(heads)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(b, n, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5
        scores = scores + self.rel_bias.get_bias(n)
        out = scores.softmax(-1) @ v
        return self.out(out.transpose(1, 2).reshape(b, n, d))


class Encoder(nn.Module):
    def __init__(self, vocab, dim=32, heads=4, n_classes=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.attn = Attention(dim, heads)
        self.cls = nn.Linear(dim, n_classes)

    def forward(self, tokens):
        h = self.embed(tokens)
        h = h + self.attn(h)
        return self.cls(h.mean(1))
