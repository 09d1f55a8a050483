"""A weight-standardised layer (parametrization) applied several times per forward;
parametrize.cached() avoids rebuilding the weight at each application."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as P

torch.manual_seed(0)

DIM = 8
BATCH = 32
STEPS = 25


class WeightStandardization(nn.Module):
    def __init__(self, eps=1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, X):
        mean = X.mean(dim=1, keepdim=True)
        std = X.std(dim=1, keepdim=True)
        return (X - mean) / (std + self.eps)


class IteratedMixer(nn.Module):
    def __init__(self, dim, n_iter=3):
        super().__init__()
        self.mix = nn.Linear(dim, dim)
        self.readout = nn.Linear(dim, 1)
        self.n_iter = n_iter

    def forward(self, x):
        h = x
        for _ in range(self.n_iter):
            h = torch.tanh(self.mix(h)) + x
        return self.readout(h)


def target_fn(x):
    return (x[:, :2].prod(1, keepdim=True) + x[:, 2:3]).tanh()


model = IteratedMixer(DIM)
P.register_parametrization(model.mix, "weight", WeightStandardization())
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)

with P.cached():
    for step in range(STEPS):
        x = torch.randn(BATCH, DIM)
        y = target_fn(x)
        pred = model(x)
        loss = F.mse_loss(pred, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

row_std = model.mix.weight.std(dim=1).mean().item()
param_sum = sum(p.sum().item() for p in model.parameters())
print(f"final loss {loss.item():.6f} row_std {row_std:.6f} param_sum {param_sum:.6f}")
