import torch
import torch.nn as nn


def spike(mem_shifted, slope):
    """Heaviside spike in the forward pass, sigmoid surrogate gradient in the backward."""
    hard = (mem_shifted > 0).float()
    soft = torch.sigmoid(slope * mem_shifted)
    return soft + (hard - soft).detach()


class Leaky(nn.Module):
    """Leaky integrate-and-fire neuron that keeps its membrane potential between calls."""

    def __init__(self, beta=0.9, threshold=1.0, slope=5.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold
        self.slope = slope
        self.mem = None

    def reset_mem(self):
        self.mem = None

    def forward(self, input_):
        if self.mem is None:
            self.mem = torch.zeros_like(input_)
        self.mem = self.beta * self.mem + input_
        spk = spike(self.mem - self.threshold, self.slope)
        self.mem = self.mem - spk * self.threshold
        return spk
