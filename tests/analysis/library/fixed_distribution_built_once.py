"""Bayesian linear regression by variational inference: a diagonal Gaussian posterior over the
weights, fitted with the reparameterisation trick and a KL term to a standard normal prior."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal, kl_divergence
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

N_SAMPLES = 128
N_FEATURES = 5
EPOCHS = 3
BATCH_SIZE = 32
NOISE_STD = 0.3


class BayesianRegression(nn.Module):
    def __init__(self, n_features):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(n_features))
        self.raw_scale = nn.Parameter(torch.full((n_features,), -3.0))

    def posterior(self):
        return Normal(self.loc, F.softplus(self.raw_scale))


true_weights = torch.randn(N_FEATURES)
x = torch.randn(N_SAMPLES, N_FEATURES)
y = x @ true_weights + NOISE_STD * torch.randn(N_SAMPLES)
loader = DataLoader(TensorDataset(x, y), batch_size=BATCH_SIZE, shuffle=True)

model = BayesianRegression(N_FEATURES)
prior = Normal(torch.zeros(N_FEATURES), torch.ones(N_FEATURES))
opt = torch.optim.Adam(model.parameters(), lr=5e-2)

for epoch in range(EPOCHS):
    total = 0.0
    for xb, yb in loader:
        posterior = model.posterior()
        weights = posterior.rsample()
        nll = -Normal(xb @ weights, NOISE_STD).log_prob(yb).sum()
        kl = kl_divergence(posterior, prior).sum()
        loss = (nll + kl * xb.shape[0] / N_SAMPLES) / xb.shape[0]
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    print(f"epoch {epoch}: elbo loss {total / len(loader):.6f}")

print(f"{loss.item():.6f}")
