import torch
import torch.nn as nn


class DampedOscillator(nn.Module):
    """x(t) = A exp(-gamma t) cos(omega t + phi) with learnable physical parameters."""

    def __init__(self):
        super().__init__()
        self.log_amp = nn.Parameter(torch.tensor(0.0))
        self.log_gamma = nn.Parameter(torch.tensor(-1.0))
        self.omega = nn.Parameter(torch.tensor(2.0))
        self.phi = nn.Parameter(torch.tensor(0.0))

    def forward(self, t):
        return self.log_amp.exp() * torch.exp(-self.log_gamma.exp() * t) * torch.cos(self.omega * t + self.phi)

    def describe(self):
        return (f"A={self.log_amp.exp().item():.3f} gamma={self.log_gamma.exp().item():.3f} "
                f"omega={self.omega.item():.3f} phi={self.phi.item():.3f}")
