import torch.nn as nn


class MultiTaskNet(nn.Module):
    """Shared trunk, one head per task (depth regression + segmentation-like classification)."""

    def __init__(self, n_in=12, width=32, n_classes=4):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(n_in, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.heads = nn.ModuleDict({
            "depth": nn.Linear(width, 1),
            "semantic": nn.Linear(width, n_classes),
        })

    def forward(self, x):
        h = self.trunk(x)
        return {name: head(h) for name, head in self.heads.items()}
