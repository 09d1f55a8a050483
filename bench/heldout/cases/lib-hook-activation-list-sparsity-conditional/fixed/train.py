"""Classifier with an L1 penalty on hidden activations (collected with a forward hook),
switched on after a few warm-up steps."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

WARMUP = 5
STEPS = 20
L1_COEF = 1e-3

model = nn.Sequential(
    nn.Linear(12, 64), nn.ReLU(),
    nn.Linear(64, 64), nn.ReLU(),
    nn.Linear(64, 3),
)

activations = []


def save_activation(module, inputs, output):
    activations.append(output)


for layer in (model[1], model[3]):
    layer.register_forward_hook(save_activation)

optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(256, 12)
y = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()

for step in range(STEPS):
    idx = torch.randint(0, x.size(0), (32,))
    xb, yb = x[idx], y[idx]
    activations.clear()
    logits = model(xb)
    loss = F.cross_entropy(logits, yb)
    if step >= WARMUP:
        loss = loss + L1_COEF * sum(a.abs().mean() for a in activations)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

with torch.no_grad():
    dead = (model[:2](x) == 0).float().mean().item()
param_sum = sum(p.sum().item() for p in model.parameters())
print(f"final loss {loss.item():.6f} dead {dead:.4f} param_sum {param_sum:.6f}")
