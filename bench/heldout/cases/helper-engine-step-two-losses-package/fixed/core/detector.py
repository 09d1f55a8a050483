import torch.nn as nn


class Detector(nn.Module):
    def __init__(self, in_dim=16, n_classes=3, hidden=32):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.cls_head = nn.Linear(hidden, n_classes)
        self.box_head = nn.Linear(hidden, 4)

    def forward(self, x):
        feats = self.backbone(x)
        return self.cls_head(feats), self.box_head(feats)
