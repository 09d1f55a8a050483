import torch
import torch.nn as nn

from .layers import MaskedLinear


class MaskedMLP(nn.Module):
    def __init__(self, in_dim, hidden, out_dim):
        super().__init__()
        self.fc1 = MaskedLinear(in_dim, hidden)
        self.fc2 = MaskedLinear(hidden, out_dim)

    def soft_masks(self, temperature):
        return {name: m.soft_mask(temperature) for name, m in self.named_children() if isinstance(m, MaskedLinear)}

    def forward(self, x, masks):
        x = torch.relu(self.fc1(x, masks["fc1"]))
        return self.fc2(x, masks["fc2"])

    def sparsity_penalty(self, masks):
        return sum(m.mean() for m in masks.values())
