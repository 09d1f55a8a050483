import functools

import torch
import torch.nn as nn
import torch.nn.functional as F


@functools.lru_cache(maxsize=16)
def relative_index(n, max_len):
    """Integer index table; no parameters involved, safe to cache."""
    pos = torch.arange(n)
    return pos[None, :] - pos[:, None] + max_len - 1


class CosineCodebook(nn.Module):
    """Vector-quantisation-like soft assignment against a learned, L2-normalised codebook.
    The normalised codebook is memoised within one step and must be cleared between steps."""

    def __init__(self, n_codes, dim, max_len=32):
        super().__init__()
        self.codes = nn.Parameter(torch.randn(n_codes, dim))
        self.rel_bias = nn.Parameter(torch.zeros(2 * max_len - 1))
        self.max_len = max_len
        self._cache = {}

    def clear_cache(self):
        self._cache.clear()

    def normalized_codes(self):
        if "codes" not in self._cache:
            self._cache["codes"] = F.normalize(self.codes, dim=-1)
        return self._cache["codes"]

    def forward(self, x):
        sim = F.normalize(x, dim=-1) @ self.normalized_codes().t()
        n = x.size(1)
        mix = (self.rel_bias[relative_index(n, self.max_len)]).softmax(-1)
        return mix @ (sim.softmax(-1) @ self.normalized_codes())
