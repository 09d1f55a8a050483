"""Classifier trained with an input-gradient penalty (double backpropagation) for smoother decision boundaries."""
import torch
import torch.nn as nn

from robust.engine import accuracy, train_epoch


def spirals(n):
    t = torch.rand(n) * 3 + 0.5
    label = torch.randint(0, 2, (n,))
    angle = t * 2.5 + label * 3.1416
    x = torch.stack([t * torch.cos(angle), t * torch.sin(angle)], dim=-1)
    return x + 0.1 * torch.randn(n, 2), label


torch.manual_seed(19)
x, y = spirals(320)
model = nn.Sequential(nn.Linear(2, 48), nn.Tanh(), nn.Linear(48, 48), nn.Tanh(), nn.Linear(48, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
for epoch in range(8):
    loss = train_epoch(model, x, y, optimizer, lam=0.01)
    if epoch % 2 == 0:
        print(f"epoch {epoch} loss {loss:.4f}")
param_sum = sum(p.sum().item() for p in model.parameters())
print(f"final loss {loss:.4f} acc {accuracy(model, x, y):.4f} param_sum {param_sum:.4f}")
