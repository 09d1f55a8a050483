"""A weight-standardised layer reused several times per forward, with the parametrization cached
for the duration of each forward."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as P

torch.manual_seed(0)


class Standardize(nn.Module):
    def forward(self, W):
        return (W - W.mean(1, keepdim=True)) / (W.std(1, keepdim=True) + 1e-5)


class Mixer(nn.Module):
    def __init__(self, dim=8, n_iter=3):
        super().__init__()
        self.mix = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, 1)
        self.n_iter = n_iter

    def forward(self, x):
        h = x
        for _ in range(self.n_iter):
            h = torch.tanh(self.mix(h)) + x
        return self.out(h)


model = Mixer()
P.register_parametrization(model.mix, "weight", Standardize())
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)

for step in range(25):
    x = torch.randn(32, 8)
    y = (x[:, :2].prod(1, keepdim=True) + x[:, 2:3]).tanh()
    with P.cached():
        pred = model(x)
    loss = F.mse_loss(pred, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

param_sum = sum(p.sum().item() for p in model.parameters())
print(f"final loss {loss.item():.6f} param_sum {param_sum:.6f}")
