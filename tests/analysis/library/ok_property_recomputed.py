"""Train a regressor whose hidden layer is weight-normalised by hand; the weight is a property."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

N_SAMPLES = 128
IN_FEATURES = 6
HIDDEN = 16
EPOCHS = 3
BATCH_SIZE = 32


class WeightNormLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.direction = nn.Parameter(torch.randn(out_features, in_features) / in_features**0.5)
        self.gain = nn.Parameter(torch.ones(out_features, 1))
        self.bias = nn.Parameter(torch.zeros(out_features))

    @property
    def weight(self):
        return self.gain * self.direction / self.direction.norm(dim=1, keepdim=True)

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = WeightNormLinear(IN_FEATURES, HIDDEN)
        self.out = nn.Linear(HIDDEN, 1)

    def forward(self, x):
        return self.out(torch.tanh(self.hidden(x))).squeeze(-1)


x = torch.randn(N_SAMPLES, IN_FEATURES)
y = torch.sin(x[:, 0]) + 0.5 * x[:, 1] * x[:, 2]
loader = DataLoader(TensorDataset(x, y), batch_size=BATCH_SIZE, shuffle=True)

model = Regressor()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)

for epoch in range(EPOCHS):
    total = 0.0
    for xb, yb in loader:
        loss = F.mse_loss(model(xb), yb) + 1e-4 * model.hidden.weight.pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    print(f"epoch {epoch}: {total / len(loader):.6f}")

print(f"{loss.item():.6f}")
