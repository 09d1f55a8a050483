import torch.nn as nn


class TwoTask(nn.Module):
    def __init__(self, in_dim=12, hidden=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.a = nn.Linear(hidden, 3)
        self.b = nn.Linear(hidden, 2)

    def forward(self, x):
        h = self.body(x)
        return self.a(h), self.b(h)
