import torch.nn as nn


def make_encoder(obs_dim, feat_dim=16):
    return nn.Sequential(nn.Linear(obs_dim, feat_dim), nn.Tanh())


def make_q_head(feat_dim, n_actions, hidden=32):
    return nn.Sequential(nn.Linear(feat_dim, hidden), nn.ReLU(), nn.Linear(hidden, n_actions))
