import torch.nn as nn


def mlp_encoder(in_dim=20):
    def build(dim):
        return nn.Sequential(nn.Linear(in_dim, 64), nn.ReLU(), nn.Linear(64, dim))
    return build
