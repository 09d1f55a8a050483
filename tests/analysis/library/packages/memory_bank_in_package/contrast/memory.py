"""A memory bank holding one normalised embedding per training sample, scored against with a
temperature-scaled softmax and refreshed with a momentum update of the rows of each batch."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class MemoryBank(nn.Module):
    def __init__(self, size, dim, momentum=0.5, temperature=0.2):
        super().__init__()
        self.momentum = momentum
        self.temperature = temperature
        self.register_buffer("memory", F.normalize(torch.randn(size, dim), dim=1))

    def forward(self, feats, idx):
        logits = feats @ self.memory.t() / self.temperature
        return F.cross_entropy(logits, idx)

    def update(self, feats, idx):
        old = self.memory.index_select(0, idx)
        mixed = F.normalize(self.momentum * old + (1 - self.momentum) * feats, dim=1)
        self.memory.index_copy_(0, idx, mixed)
