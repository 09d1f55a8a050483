import torch
import torch.nn.functional as F


class MemoryBank:
    """One feature vector per training instance, updated with momentum (non-parametric instance discrimination)."""

    def __init__(self, n_items, dim, momentum=0.5):
        self.momentum = momentum
        self.memory = F.normalize(torch.randn(n_items, dim), dim=1)

    def logits(self, feats, temperature):
        return feats @ self.memory.T / temperature

    def update(self, feats, idx):
        mixed = self.momentum * self.memory[idx] + (1 - self.momentum) * feats
        self.memory[idx] = F.normalize(mixed, dim=1)
