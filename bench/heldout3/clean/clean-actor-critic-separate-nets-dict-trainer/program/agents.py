import torch.nn as nn


def mlp(i, o, h=32):
    return nn.Sequential(nn.Linear(i, h), nn.Tanh(), nn.Linear(h, h), nn.Tanh(), nn.Linear(h, o))


def build_agent(obs_dim, n_actions):
    """Actor and critic do not share a body."""
    return {"actor": mlp(obs_dim, n_actions), "critic": mlp(obs_dim, 1)}
