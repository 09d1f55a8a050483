import torch


def make_splits(n_train=192, n_val=64, in_dim=18, n_classes=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(in_dim, n_classes, generator=g)
    x = torch.randn(n_train + n_val, in_dim, generator=g)
    y = (x @ w).argmax(1)
    return (x[:n_train], y[:n_train]), (x[n_train:], y[n_train:])
