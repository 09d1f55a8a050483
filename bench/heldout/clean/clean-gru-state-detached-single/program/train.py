"""Stateful GRU regressor on a long noisy sine; the state is detached between windows."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)

WINDOW = 12
HIDDEN = 24
STEPS = 30


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(1, HIDDEN, batch_first=True)
        self.out = nn.Linear(HIDDEN, 1)

    def forward(self, x, h=None):
        y, h = self.gru(x, h)
        return self.out(y), h


model = Regressor()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
criterion = nn.MSELoss()

t = torch.linspace(0, STEPS * math.pi, STEPS * WINDOW + 1)
signal = torch.sin(t) + 0.05 * torch.randn_like(t)

h = None
for step in range(STEPS):
    seg = signal[step * WINDOW:(step + 1) * WINDOW + 1]
    x = seg[:-1].view(1, WINDOW, 1)
    y = seg[1:].view(1, WINDOW, 1)

    pred, h = model(x, h)
    h = h.detach()

    loss = criterion(pred, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

param_sum = sum(p.sum().item() for p in model.parameters())
print(f"final loss {loss.item():.6f} param_sum {param_sum:.6f}")
