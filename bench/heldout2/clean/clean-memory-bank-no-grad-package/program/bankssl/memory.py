import torch
import torch.nn.functional as F


class FeatureQueue:
    """FIFO queue of negatives; keys are written with the graph cut."""

    def __init__(self, size, dim):
        self.keys = F.normalize(torch.randn(size, dim), dim=1)
        self.ptr = 0

    def negatives(self):
        return self.keys

    def push(self, keys):
        keys = keys.detach()
        n = keys.size(0)
        idx = (torch.arange(n) + self.ptr) % self.keys.size(0)
        self.keys[idx] = keys
        self.ptr = (self.ptr + n) % self.keys.size(0)
