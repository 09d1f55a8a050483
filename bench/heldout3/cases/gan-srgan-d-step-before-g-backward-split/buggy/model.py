import torch
import torch.nn as nn


class Generator(nn.Module):
    """1-D super-resolution: 16 samples in, 32 out."""

    def __init__(self, scale=2, ch=16):
        super().__init__()
        self.head = nn.Sequential(nn.Conv1d(1, ch, 5, padding=2), nn.PReLU())
        self.body = nn.Sequential(nn.Conv1d(ch, ch, 3, padding=1), nn.BatchNorm1d(ch), nn.PReLU(),
                                  nn.Conv1d(ch, ch, 3, padding=1))
        self.up = nn.Sequential(nn.Upsample(scale_factor=scale, mode="linear"), nn.Conv1d(ch, 1, 5, padding=2))

    def forward(self, x):
        h = self.head(x)
        return torch.tanh(self.up(h + self.body(h)))


class Discriminator(nn.Module):
    def __init__(self, ch=16):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(1, ch, 3, padding=1), nn.LeakyReLU(0.2),
            nn.Conv1d(ch, ch, 3, stride=2, padding=1), nn.LeakyReLU(0.2),
            nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(ch, 1),
        )

    def forward(self, x):
        return torch.sigmoid(self.net(x)).view(-1)
