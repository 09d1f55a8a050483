import torch


def ring_data(n, dim=16):
    t = torch.rand(n, 1) * 6.2832
    freqs = torch.arange(1, dim + 1).float() / dim
    return torch.sin(t * freqs * 3.0)
