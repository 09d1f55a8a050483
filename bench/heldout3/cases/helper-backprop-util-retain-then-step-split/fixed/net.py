import torch.nn as nn


class DeeplySupervisedNet(nn.Module):
    """Main classifier plus an auxiliary classifier on the intermediate features (GoogLeNet-style)."""

    def __init__(self, n_in=20, width=32, n_classes=5):
        super().__init__()
        self.stage1 = nn.Sequential(nn.Linear(n_in, width), nn.ReLU(), nn.BatchNorm1d(width))
        self.stage2 = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.aux_head = nn.Linear(width, n_classes)
        self.head = nn.Linear(width, n_classes)

    def forward(self, x):
        h1 = self.stage1(x)
        out = self.head(self.stage2(h1))
        if self.training:
            return out, self.aux_head(h1)
        return out
