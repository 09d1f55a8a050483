"""Train a regressor whose head's inputs are kept by a forward pre-hook, for a feature-decorrelation
penalty; the module keeps every batch's features, never emptied."""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

N_SAMPLES = 64
IN_FEATURES = 8
HIDDEN = 16
STEPS = 3
BATCH_SIZE = 16
WEIGHT = 1e-2


class FeatureStore:
    def __init__(self):
        self.features = []

    def __call__(self, module, args):
        self.features.append(args[0])

    def penalty(self):
        total = 0.0
        for f in self.features:
            centred = f - f.mean(dim=0, keepdim=True)
            cov = centred.t() @ centred / f.shape[0]
            total = total + (cov - torch.diag(torch.diag(cov))).pow(2).sum()
        return total


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(IN_FEATURES, HIDDEN), nn.Tanh())
        self.head = nn.Linear(HIDDEN, 1)
        self.store = FeatureStore()
        self.head.register_forward_pre_hook(self.store)

    def forward(self, x):
        return self.head(self.body(x)).squeeze(-1)


x = torch.randn(N_SAMPLES, IN_FEATURES)
y = x.sum(dim=1)
model = Regressor()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)

step = 0
while step < STEPS:
    i = 0
    while i < N_SAMPLES:
        xb, yb = x[i:i + BATCH_SIZE], y[i:i + BATCH_SIZE]
        pred = model(xb)
        loss = F.mse_loss(pred, yb) + WEIGHT * model.store.penalty()
        opt.zero_grad()
        loss.backward()  # expect: GG003
        opt.step()
        i += BATCH_SIZE
    print(f"step {step}: loss {loss.item():.4f}")
    step += 1

print(f"{loss.item():.6f}")
