import torch
import torch.nn as nn


class RunningScale(nn.Module):
    """Divides features by a running estimate of their standard deviation (no mean subtraction)."""

    def __init__(self, dim, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.register_buffer("running_std", torch.ones(dim))

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                batch_std = x.std(dim=0) + self.eps
                # out of place: graphs of earlier forwards keep the tensor they divided by
                self.running_std = (1 - self.momentum) * self.running_std + self.momentum * batch_std
        return x / self.running_std
