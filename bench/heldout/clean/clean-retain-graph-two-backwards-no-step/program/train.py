"""Per-task gradients on a shared trunk: backward each task loss separately (retaining the
graph for the second), record the per-task gradient norm, then take one optimizer step."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

trunk = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh())
head_a = nn.Linear(32, 2)
head_b = nn.Linear(32, 1)
params = list(trunk.parameters()) + list(head_a.parameters()) + list(head_b.parameters())
optimizer = torch.optim.SGD(params, lr=0.05)


def trunk_grad_norm():
    return torch.norm(torch.stack([p.grad.norm() for p in trunk.parameters()])).item()


norms_a, norms_b = [], []
for step in range(25):
    x = torch.randn(32, 8)
    y_a = (x[:, 0] > 0).long()
    y_b = x[:, 1:2] * 2

    h = trunk(x)
    loss_a = F.cross_entropy(head_a(h), y_a)
    loss_b = F.mse_loss(head_b(h), y_b)

    optimizer.zero_grad()
    loss_a.backward(retain_graph=True)
    norms_a.append(trunk_grad_norm())
    before = [p.grad.clone() for p in trunk.parameters()]
    loss_b.backward()
    norms_b.append(torch.norm(torch.stack([(p.grad - g).norm() for p, g in zip(trunk.parameters(), before)])).item())
    optimizer.step()

param_sum = sum(p.sum().item() for p in params)
print(f"final loss_a {loss_a.item():.6f} loss_b {loss_b.item():.6f} "
      f"ratio {norms_a[-1] / norms_b[-1]:.6f} param_sum {param_sum:.6f}")
