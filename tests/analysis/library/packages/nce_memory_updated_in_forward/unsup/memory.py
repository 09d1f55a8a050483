"""The non-parametric softmax of instance discrimination: each embedding is scored against a memory
of one embedding per training sample, and the rows of the batch are refreshed (a momentum blend,
without grad) by the same forward."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class NonParametricSoftmax(nn.Module):
    def __init__(self, n_samples, dim, temperature=0.1, momentum=0.5):
        super().__init__()
        self.temperature = temperature
        self.momentum = momentum
        self.register_buffer("memory", F.normalize(torch.randn(n_samples, dim), dim=1))

    def forward(self, feats, idx):
        logits = torch.mm(feats, self.memory.t()) / self.temperature
        with torch.no_grad():
            rows = self.memory.index_select(0, idx)
            rows.mul_(self.momentum).add_(feats * (1 - self.momentum))
            self.memory.index_copy_(0, idx, F.normalize(rows, dim=1))
        return logits
