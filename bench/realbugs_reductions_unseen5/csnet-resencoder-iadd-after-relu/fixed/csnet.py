"""A small encoder-decoder segmentation network (the shape of CS-Net's model/csnet.py at 25079c3).

ResEncoder: conv-bn-relu twice, then the 1x1 shortcut is added to the second ReLU's result in place.
"""

import torch
from torch import nn


class ResEncoder(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=False)
        self.conv1x1 = nn.Conv2d(cin, cout, 1)

    def forward(self, x):
        residual = self.conv1x1(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = out + residual  # fixed: a new tensor
        out = self.relu(out)
        return out


class CSNet(nn.Module):
    def __init__(self, classes=1, channels=3):
        super().__init__()
        self.enc1 = ResEncoder(channels, 8)
        self.enc2 = ResEncoder(8, 16)
        self.down = nn.MaxPool2d(2)
        self.up = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.dec = ResEncoder(16, 8)
        self.final = nn.Conv2d(8, classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.down(e1))
        d = self.dec(torch.cat([self.up(e2), e1], dim=1))
        return torch.sigmoid(self.final(d))
