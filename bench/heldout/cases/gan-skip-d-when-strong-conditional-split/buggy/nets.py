import torch.nn as nn


class G(nn.Module):
    def __init__(self, nz, dim, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(nz, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, dim))

    def forward(self, z):
        return self.net(z)


class D(nn.Module):
    def __init__(self, dim, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)
