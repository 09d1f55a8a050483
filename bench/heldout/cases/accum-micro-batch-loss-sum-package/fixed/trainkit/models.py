import torch.nn as nn


def make_mlp(in_dim, n_classes, hidden=64, depth=2):
    layers, dim = [], in_dim
    for _ in range(depth):
        layers += [nn.Linear(dim, hidden), nn.LayerNorm(hidden), nn.ReLU()]
        dim = hidden
    layers.append(nn.Linear(dim, n_classes))
    return nn.Sequential(*layers)
