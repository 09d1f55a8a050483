"""Weight-normalised projection with a soft orthogonality penalty on its weight."""
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import weight_norm

warnings.filterwarnings("ignore", category=FutureWarning)


class Projector(nn.Module):
    def __init__(self, in_dim=12, out_dim=6):
        super().__init__()
        self.proj = weight_norm(nn.Linear(in_dim, out_dim))
        self.head = nn.Linear(out_dim, 1)

    def forward(self, x):
        return self.head(torch.relu(self.proj(x))).squeeze(-1)


def train(model, batches, optimizer, ortho_coef=1e-2):
    model.train()
    eye = torch.eye(model.proj.out_features)
    history = []
    for x, y in batches:
        w = model.proj.weight
        ortho = ortho_coef * (w @ w.t() - eye).pow(2).sum()
        pred = model(x)
        loss = F.mse_loss(pred, y) + ortho
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append(loss.item())
    return history


def make_batches(n_batches, batch=32, in_dim=12):
    w = torch.randn(in_dim)
    for _ in range(n_batches):
        x = torch.randn(batch, in_dim)
        yield x, torch.sin(x @ w)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Projector()
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    history = train(model, make_batches(20), optimizer)
    g_norm = model.proj.weight_g.norm().item()
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {history[-1]:.6f} g_norm {g_norm:.6f} param_sum {param_sum:.6f}")
