import torch
import torch.nn as nn


def spike(x, slope=5.0):
    hard = (x > 0).float()
    soft = torch.sigmoid(slope * x)
    return soft + (hard - soft).detach()


class LIF(nn.Module):
    def __init__(self, beta=0.85, threshold=1.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold
        self.mem = None

    def reset(self):
        self.mem = None

    def forward(self, x):
        if self.mem is None:
            self.mem = torch.zeros_like(x)
        self.mem = self.beta * self.mem + x
        s = spike(self.mem - self.threshold)
        self.mem = self.mem - s * self.threshold
        return s


def reset_states(net):
    for m in net.modules():
        if isinstance(m, LIF):
            m.reset()
