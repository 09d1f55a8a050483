"""Fit a heteroscedastic regressor: each batch's prediction is a Gaussian whose std is cached."""

import functools
import math

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

N_SAMPLES = 128
IN_FEATURES = 4
EPOCHS = 3
BATCH_SIZE = 32


class Gaussian:
    def __init__(self, mean, log_std):
        self.mean = mean
        self.log_std = log_std

    @functools.cached_property
    def std(self):
        return self.log_std.exp()

    def nll(self, target):
        z = (target - self.mean) / self.std
        return (0.5 * z.pow(2) + self.log_std + 0.5 * math.log(2 * math.pi)).mean()


class GaussianHead(nn.Module):
    def __init__(self, in_features, hidden):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU())
        self.mean = nn.Linear(hidden, 1)
        self.log_std = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.body(x)
        return Gaussian(self.mean(h).squeeze(-1), self.log_std(h).squeeze(-1))


x = torch.randn(N_SAMPLES, IN_FEATURES)
noise = 0.1 + 0.5 * x[:, 0].abs()
y = x.sum(dim=1) + noise * torch.randn(N_SAMPLES)
loader = DataLoader(TensorDataset(x, y), batch_size=BATCH_SIZE, shuffle=True)

model = GaussianHead(IN_FEATURES, 16)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)

for epoch in range(EPOCHS):
    total = 0.0
    for xb, yb in loader:
        prediction = model(xb)
        loss = prediction.nll(yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    print(f"epoch {epoch}: nll {total / len(loader):.6f}, mean std {prediction.std.mean().item():.4f}")

print(f"{loss.item():.6f}")
