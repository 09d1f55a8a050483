"""Helpers the reductions import: the analyzer sees only their names, never these bodies."""

import torch
from torch import nn


class Tuner:
    """Adapts a probability from the sign of the discriminator's output (returns a float)."""

    def __init__(self) -> None:
        self.p = 0.0

    def tune(self, pred: torch.Tensor) -> float:
        self.p = min(1.0, self.p + 1e-3 * float(pred.sign().sum().item()))
        return self.p


class Actor(nn.Module):
    """A policy whose `noise_length()` is an int, not a forward."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)

    def noise_length(self) -> int:
        return 4


class Buffer:
    """A replay buffer of numpy observations; batches are fresh tensors."""

    def __init__(self, length: int) -> None:
        self.length = length
        self.items: list = []

    def store(self, obs) -> None:
        self.items.append(obs)

    def sample(self) -> torch.Tensor:
        return torch.as_tensor(self.items[-2:], dtype=torch.float32)


def feature_loss(phi: torch.Tensor, backward: bool = True) -> float:
    """A loss that runs its own backward (pytorch_GAN_zoo's `GDPPLoss(..., backward=True)`)."""
    loss = phi.pow(2).mean()
    if backward:
        loss.backward()
    return loss.item()

