import torch.nn as nn


class MultiHeadNet(nn.Module):
    def __init__(self, in_dim, hidden=32, n_classes=3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.head_a = nn.Linear(hidden, n_classes)
        self.head_b = nn.Linear(hidden, 1)

    def forward(self, x):
        features = self.encoder(x)
        return self.head_a(features), self.head_b(features).squeeze(-1)
