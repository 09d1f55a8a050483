"""PINN for u' + u = 0, u(0) = 1 on [0, 2]: features and derivatives are rebuilt from the leaf t at every step."""
import math

import torch
import torch.nn as nn

torch.manual_seed(79)
net = nn.Sequential(nn.Linear(3, 24), nn.Tanh(), nn.Linear(24, 1))
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
t = torch.linspace(0, 2, 48).unsqueeze(-1).requires_grad_(True)
t0 = torch.zeros(1, 1)


def features(t):
    return torch.cat([t, torch.sin(math.pi * t), torch.cos(math.pi * t)], dim=-1)


for it in range(150):
    u = net(features(t))
    du = torch.autograd.grad(u, t, grad_outputs=torch.ones_like(u), create_graph=True)[0]
    loss = (du + u).pow(2).mean() + (net(features(t0)) - 1).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

with torch.no_grad():
    tt = torch.linspace(0, 2, 50).unsqueeze(-1)
    err = (net(features(tt)) - torch.exp(-tt)).abs().max().item()
param_sum = sum(p.sum().item() for p in net.parameters())
print(f"final loss {loss.item():.4f} max_err {err:.4f} param_sum {param_sum:.4f}")
