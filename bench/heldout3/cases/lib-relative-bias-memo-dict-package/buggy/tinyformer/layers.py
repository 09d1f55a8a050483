import torch
import torch.nn as nn


class RelPosSelfAttention(nn.Module):
    """Single-head self-attention with a learned relative-position bias table.

    The (n, n) bias matrix only depends on the sequence length, so it is memoised per length."""

    def __init__(self, dim, max_len=64):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.rel_table = nn.Parameter(torch.zeros(2 * max_len - 1))
        nn.init.trunc_normal_(self.rel_table, std=0.02)
        self.max_len = max_len
        self._bias_cache = {}

    def relative_bias(self, n):
        if n not in self._bias_cache:
            pos = torch.arange(n)
            idx = pos[None, :] - pos[:, None] + self.max_len - 1
            self._bias_cache[n] = self.rel_table[idx]
        return self._bias_cache[n]

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        att = q @ k.transpose(-2, -1) / q.size(-1) ** 0.5 + self.relative_bias(x.size(1))
        return self.proj(att.softmax(-1) @ v)
