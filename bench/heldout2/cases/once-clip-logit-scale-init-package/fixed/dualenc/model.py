import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class DualEncoder(nn.Module):
    """CLIP-style two-tower model with a learnable temperature."""

    def __init__(self, dim_a, dim_b, embed_dim=16, init_temperature=0.07):
        super().__init__()
        self.tower_a = nn.Sequential(nn.Linear(dim_a, 32), nn.GELU(), nn.Linear(32, embed_dim))
        self.tower_b = nn.Sequential(nn.Linear(dim_b, 32), nn.GELU(), nn.Linear(32, embed_dim))
        self.log_inv_temp = nn.Parameter(torch.tensor(math.log(1.0 / init_temperature)))

    def forward(self, a, b):
        za = F.normalize(self.tower_a(a), dim=-1)
        zb = F.normalize(self.tower_b(b), dim=-1)
        logit_scale = self.log_inv_temp.exp().clamp(max=100.0)
        return logit_scale * za @ zb.T
