import torch.nn as nn

__all__ = ["make_teacher", "make_student"]


def make_teacher(n_in, n_classes):
    return nn.Sequential(nn.Linear(n_in, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, n_classes))


def make_student(n_in, n_classes):
    return nn.Sequential(nn.Linear(n_in, 16), nn.ReLU(), nn.Linear(16, n_classes))
