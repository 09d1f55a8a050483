import torch.nn as nn


class InceptionLike(nn.Module):
    """A stem, an auxiliary classifier on the intermediate features, and the main tower."""

    def __init__(self, in_dim, n_classes, width=32):
        super().__init__()
        self.stem = nn.Sequential(nn.Linear(in_dim, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.aux = nn.Sequential(nn.Linear(width, 16), nn.ReLU(), nn.Linear(16, n_classes))
        self.tower = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, n_classes))
        self.aux_logits = True

    def forward(self, x):
        h = self.stem(x)
        logits = self.tower(h)
        if self.training and self.aux_logits:
            return logits, self.aux(h)
        return logits
