import torch.nn as nn
import torch.nn.functional as F

from .layers import RunningScale


class SimSiam(nn.Module):
    def __init__(self, in_dim=16, dim=12):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(in_dim, 32), nn.ReLU(), nn.Linear(32, dim), RunningScale(dim))
        self.predictor = nn.Sequential(nn.Linear(dim, 16), nn.ReLU(), nn.Linear(16, dim))

    def forward(self, x1, x2):
        z1, z2 = self.encoder(x1), self.encoder(x2)
        p1, p2 = self.predictor(z1), self.predictor(z2)
        return p1, p2, z1, z2


def simsiam_loss(p1, p2, z1, z2):
    return -0.5 * (F.cosine_similarity(p1, z2.detach()).mean() + F.cosine_similarity(p2, z1.detach()).mean())
