import torch
import torch.nn as nn


class VAE(nn.Module):
    def __init__(self, x_dim=12, z_dim=3, hidden=32):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(x_dim, hidden), nn.LeakyReLU(0.2))
        self.mu = nn.Linear(hidden, z_dim)
        self.logvar = nn.Linear(hidden, z_dim)
        self.dec = nn.Sequential(nn.Linear(z_dim, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, x_dim))

    def forward(self, x):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.dec(z), mu, logvar


class Critic(nn.Module):
    def __init__(self, x_dim=12, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(x_dim, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)
