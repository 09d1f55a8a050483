import torch.nn as nn


class SegNet1D(nn.Module):
    def __init__(self, ch=12, n_classes=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv1d(1, ch, 5, padding=2), nn.ReLU(), nn.Conv1d(ch, ch, 5, padding=2),
                                      nn.ReLU())
        self.decode = nn.Conv1d(ch, n_classes, 1)
        self.proj = nn.Sequential(nn.Conv1d(ch, ch, 1), nn.ReLU(), nn.Conv1d(ch, 8, 1))

    def forward(self, x):
        f = self.backbone(x)
        return self.decode(f), self.proj(f)
