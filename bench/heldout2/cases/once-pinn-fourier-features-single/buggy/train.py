"""PINN for the 1-D Poisson problem u'' = -pi^2 sin(pi x) on [0, 1], u(0) = u(1) = 0, with Fourier input features."""
import math

import torch
import torch.nn as nn

N_COLLOC = 64
N_FREQ = 4
ITERS = 150


def fourier_features(x):
    k = torch.arange(1, N_FREQ + 1, dtype=x.dtype) * math.pi
    return torch.cat([x, torch.sin(k * x), torch.cos(k * x)], dim=-1)


torch.manual_seed(1)
net = nn.Sequential(nn.Linear(1 + 2 * N_FREQ, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
opt = torch.optim.Adam(net.parameters(), lr=2e-3)

x = torch.linspace(0.0, 1.0, N_COLLOC).unsqueeze(-1).requires_grad_(True)
feats = fourier_features(x)
forcing = -(math.pi ** 2) * torch.sin(math.pi * x.detach())
x_bc = torch.tensor([[0.0], [1.0]])

for it in range(ITERS):
    u = net(feats)
    du = torch.autograd.grad(u.sum(), x, create_graph=True)[0]
    d2u = torch.autograd.grad(du.sum(), x, create_graph=True)[0]
    residual = d2u - forcing
    loss = residual.pow(2).mean() + 10.0 * net(fourier_features(x_bc)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if it % 50 == 0:
        print(f"it {it} loss {loss.item():.4f}")

with torch.no_grad():
    xt = torch.linspace(0, 1, 101).unsqueeze(-1)
    err = (net(fourier_features(xt)) - torch.sin(math.pi * xt)).abs().max().item()
param_sum = sum(p.sum().item() for p in net.parameters())
print(f"final loss {loss.item():.4f} max_err {err:.4f} param_sum {param_sum:.4f}")
