"""BYOL on toy vectors: online network + predictor, EMA target updated under no_grad."""
import argparse
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


def mlp(i, h, o):
    return nn.Sequential(nn.Linear(i, h), nn.BatchNorm1d(h), nn.ReLU(), nn.Linear(h, o))


class BYOL(nn.Module):
    def __init__(self, dim=12, hidden=32, proj=8, tau=0.99):
        super().__init__()
        self.online = nn.Sequential(mlp(dim, hidden, hidden), mlp(hidden, hidden, proj))
        self.predictor = mlp(proj, hidden, proj)
        self.target = copy.deepcopy(self.online)
        for p in self.target.parameters():
            p.requires_grad_(False)
        self.tau = tau

    @torch.no_grad()
    def update_target(self):
        for po, pt in zip(self.online.parameters(), self.target.parameters()):
            pt.mul_(self.tau).add_(po, alpha=1 - self.tau)

    def loss(self, v1, v2):
        p1, p2 = self.predictor(self.online(v1)), self.predictor(self.online(v2))
        with torch.no_grad():
            z1, z2 = self.target(v1), self.target(v2)
        def d(p, z):
            return 2 - 2 * F.cosine_similarity(p, z, dim=-1).mean()
        return d(p1, z2) + d(p2, z1)


def augment(x):
    return x * (1 + 0.1 * torch.randn_like(x)) + 0.1 * torch.randn_like(x)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=32)
    args = ap.parse_args()
    torch.manual_seed(24)
    model = BYOL()
    params = list(model.online.parameters()) + list(model.predictor.parameters())
    opt = torch.optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=1e-4)
    centers = torch.randn(4, 12) * 2
    for step in range(args.steps):
        x = centers[torch.randint(4, (args.batch,))] + 0.3 * torch.randn(args.batch, 12)
        loss = model.loss(augment(x), augment(x))
        opt.zero_grad()
        loss.backward()
        opt.step()
        model.update_target()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f}")
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"loss {loss.item():.4f} param_sum {param_sum:.4f}")
