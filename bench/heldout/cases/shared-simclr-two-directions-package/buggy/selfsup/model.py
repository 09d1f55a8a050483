import torch.nn as nn


class SimCLRNet(nn.Module):
    def __init__(self, in_dim, hidden=64, proj=16):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(in_dim, hidden), nn.BatchNorm1d(hidden), nn.ReLU(),
                                     nn.Linear(hidden, hidden), nn.ReLU())
        self.projector = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, proj))

    def forward(self, x):
        return self.projector(self.encoder(x))
