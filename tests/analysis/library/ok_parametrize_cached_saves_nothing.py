"""Learn a symmetric bilinear similarity between pairs of vectors. `parametrize.cached()` is
entered around the whole loop: the symmetric parametrization saves no tensors for its backward,
so backing through the cached weight again raises nothing (the cache does go stale after each
step, which this script accepts)."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as P
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

N_PAIRS = 128
DIM = 6
EPOCHS = 2
BATCH_SIZE = 32


class Symmetric(nn.Module):
    def forward(self, weight):
        return weight.triu() + weight.triu(1).T


class BilinearSimilarity(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.metric = nn.Linear(dim, dim, bias=False)
        P.register_parametrization(self.metric, "weight", Symmetric())

    def forward(self, a, b):
        return (self.metric(a) * b).sum(dim=1)


true_metric = torch.randn(DIM, DIM)
true_metric = true_metric + true_metric.T
a = torch.randn(N_PAIRS, DIM)
b = torch.randn(N_PAIRS, DIM)
similarity = ((a @ true_metric) * b).sum(dim=1)
loader = DataLoader(TensorDataset(a, b, similarity), batch_size=BATCH_SIZE, shuffle=True)

model = BilinearSimilarity(DIM)
opt = torch.optim.SGD(model.parameters(), lr=0.05)

with P.cached():
    for epoch in range(EPOCHS):
        total = 0.0
        for ab, bb, sb in loader:
            loss = F.mse_loss(model(ab, bb), sb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        print(f"epoch {epoch}: {total / len(loader):.6f}")

print(f"{loss.item():.6f}")
