"""Bayesian last layer trained by variational inference (reparameterised ELBO)."""
import torch
import torch.nn.functional as F
from torch.distributions import kl_divergence

from bayes import BayesRegressor

torch.manual_seed(0)

N, D = 128, 5
STEPS = 25
BATCH = 32

x_all = torch.randn(N, D)
y_all = (x_all[:, 0] - 0.5 * x_all[:, 1]).unsqueeze(1) + 0.1 * torch.randn(N, 1)

model = BayesRegressor(D)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
noise_std = 0.1


for step in range(STEPS):
    idx = torch.randint(0, N, (BATCH,))
    x, y = x_all[idx], y_all[idx]

    h = model.features(x)
    q_w = model.fc.weight_posterior()
    w = q_w.rsample()
    pred = F.linear(h, w, model.fc.bias)

    nll = 0.5 * ((pred - y) ** 2).sum() / noise_std ** 2 * (N / BATCH)
    kl = kl_divergence(q_w, model.fc.prior).sum()
    loss = (nll + kl) / N

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

with torch.no_grad():
    mse = F.mse_loss(F.linear(model.features(x_all), model.fc.mu, model.fc.bias), y_all).item()

param_sum = sum(p.sum().item() for p in model.parameters())
print(f"final loss {loss.item():.6f} mse {mse:.6f} param_sum {param_sum:.6f}")
