"""Fit a RealNVP density to the two-moons distribution by maximum likelihood."""
import math

import torch

from flows import RealNVP


def two_moons(n):
    t = torch.rand(n) * math.pi
    upper = torch.rand(n) < 0.5
    x = torch.where(upper, torch.cos(t), 1 - torch.cos(t))
    y = torch.where(upper, torch.sin(t), 0.5 - torch.sin(t))
    return torch.stack([x, y], dim=-1) + 0.05 * torch.randn(n, 2)


def nll(flow, x):
    z = flow(x)
    log_pz = -0.5 * (z ** 2).sum(-1) - math.log(2 * math.pi)
    return -(log_pz + flow.log_det).mean()


def fit(flow, data, optimizer, epochs, batch_size=128):
    losses = []
    for epoch in range(epochs):
        perm = torch.randperm(data.size(0))
        for i in range(0, data.size(0), batch_size):
            loss = nll(flow, data[perm[i:i + batch_size]])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses


def main():
    torch.manual_seed(9)
    data = two_moons(1024)
    flow = RealNVP()
    optimizer = torch.optim.Adam(flow.parameters(), lr=3e-3)
    losses = fit(flow, data, optimizer, epochs=6)
    param_sum = sum(p.sum().item() for p in flow.parameters())
    print(f"steps {len(losses)} first nll {losses[0]:.4f}")
    print(f"final nll {sum(losses[-8:]) / 8:.4f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
