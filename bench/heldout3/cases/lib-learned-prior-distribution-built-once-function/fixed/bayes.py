import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal


class BayesLinear(nn.Module):
    """Mean-field Gaussian weights, sampled with the reparameterisation trick."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.w_mu = nn.Parameter(torch.randn(n_out, n_in) * 0.1)
        self.w_rho = nn.Parameter(torch.full((n_out, n_in), -4.0))
        self.b = nn.Parameter(torch.zeros(n_out))

    def posterior(self):
        return Normal(self.w_mu, F.softplus(self.w_rho))

    def forward(self, x):
        w = self.posterior().rsample()
        return F.linear(x, w, self.b)


class EmpiricalBayesPrior(nn.Module):
    """A learned zero-mean Gaussian prior shared by all weights (type-II ML of its scale)."""

    def __init__(self):
        super().__init__()
        self.log_scale = nn.Parameter(torch.tensor(0.0))

    def distribution(self):
        return Normal(torch.tensor(0.0), self.log_scale.exp())
