"""Reduction of Beomi/InfiniTransformer, infini_gemma/modeling_infini_gemma.py (GemmaInfiniAttention).

Buggy commit c38298c2144ee40ac187679e546d8950d4f316de, fix 122a4dffee48cae99dac639503c9cdb0c1a27e6a.
Fixed version (as at 122a4df): the attention layer returns `self.memory.detach()`.
"""

import torch
from torch import nn

DETACH = True  # False: buggy c38298c; True: fix 122a4df


class MemoryAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.q_proj = nn.Linear(dim, dim)
        self.memory = None

    def forward(self, x, memory=None):
        self.memory = memory
        q = torch.nn.functional.elu(self.q_proj(x)) + 1
        k = torch.nn.functional.elu(self.k_proj(x)) + 1
        v = self.v_proj(x)
        retrieved = q @ self.memory if self.memory is not None else torch.zeros_like(q)
        update = k.transpose(-2, -1) @ v
        self.memory = update if self.memory is None else self.memory + update
        out = retrieved + v
        return out, self.memory.detach()
