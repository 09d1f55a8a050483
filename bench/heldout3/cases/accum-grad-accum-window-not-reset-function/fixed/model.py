import torch.nn as nn


class TabularNet(nn.Module):
    def __init__(self, n_in, n_classes, width=32, p=0.1):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_in, width), nn.LayerNorm(width), nn.GELU(), nn.Dropout(p),
            nn.Linear(width, width), nn.GELU(),
            nn.Linear(width, n_classes),
        )

    def forward(self, x):
        return self.net(x)
