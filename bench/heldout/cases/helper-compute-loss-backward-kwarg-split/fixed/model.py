import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, in_dim, hidden, n_classes, p_drop=0.1):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.ReLU(), nn.Dropout(p_drop),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, n_classes),
        )

    def forward(self, x):
        return self.layers(x)
