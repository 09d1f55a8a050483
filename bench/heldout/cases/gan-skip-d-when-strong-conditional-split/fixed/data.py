import torch


def gaussian_mixture(n, dim=4, k=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(k, dim, generator=g) * 3
    idx = torch.randint(0, k, (n,), generator=g)
    return centers[idx] + 0.3 * torch.randn(n, dim, generator=g)
