import torch
import torch.nn as nn


class WorldModel(nn.Module):
    def __init__(self, obs_dim, act_dim, latent=16):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(obs_dim, 32), nn.ELU(), nn.Linear(32, latent))
        self.dynamics = nn.Sequential(nn.Linear(latent + act_dim, 32), nn.ELU(), nn.Linear(32, latent))
        self.reward = nn.Sequential(nn.Linear(latent, 16), nn.ELU(), nn.Linear(16, 1))

    def step(self, z, a):
        return z + self.dynamics(torch.cat([z, a], -1))


class Actor(nn.Module):
    def __init__(self, latent, act_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent, 32), nn.ELU(), nn.Linear(32, act_dim))

    def forward(self, z):
        return torch.tanh(self.net(z))
