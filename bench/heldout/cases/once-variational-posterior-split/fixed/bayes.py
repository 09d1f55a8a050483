import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal


class BayesLinear(nn.Module):
    """Linear layer with a factorised Gaussian posterior over the weights (Bayes by Backprop)."""

    def __init__(self, in_features, out_features, prior_std=1.0):
        super().__init__()
        self.mu = nn.Parameter(torch.randn(out_features, in_features) * 0.1)
        self.rho = nn.Parameter(torch.full((out_features, in_features), -3.0))
        self.bias = nn.Parameter(torch.zeros(out_features))
        self.prior = Normal(0.0, prior_std)

    def weight_posterior(self):
        return Normal(self.mu, F.softplus(self.rho))


class BayesRegressor(nn.Module):
    def __init__(self, in_dim, hidden=16):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(in_dim, hidden), nn.Tanh())
        self.fc = BayesLinear(hidden, 1)
