"""Tensor helpers (the shape of glow/thops.py): the split returns basic-indexing views."""


def split_feature(tensor, kind="split"):
    c = tensor.size(1)
    if kind == "split":
        return tensor[:, : c // 2, ...], tensor[:, c // 2 :, ...]
    return tensor[:, 0::2, ...], tensor[:, 1::2, ...]


def cat_feature(a, b):
    import torch

    return torch.cat((a, b), dim=1)
