"""Reduction of iMED-Lab/CS-Net train.py at 25079c3 (fix 0cbe18d): the loop backward-s BCE + Dice
per batch; the in-place residual add sits in csnet.ResEncoder.forward. torch 2.13: "one of the
variables needed for gradient computation has been modified by an inplace operation" at the
loss.backward() below, first batch.
gradguard at 1eed1da reports nothing for this program (missed, as on the repository).
"""

import torch
from torch import nn

from csnet import CSNet


def dice_coeff_loss(pred, target, smooth=1.0):
    inter = (pred * target).sum()
    return 1 - (2 * inter + smooth) / (pred.sum() + target.sum() + smooth)


torch.manual_seed(0)
net = CSNet(classes=1, channels=3)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
critrion = nn.MSELoss()
for epoch in range(2):
    for step in range(2):
        image = torch.randn(2, 3, 16, 16)
        label = (torch.rand(2, 1, 16, 16) > 0.5).float()
        optimizer.zero_grad()
        pred = net(image)
        loss = critrion(pred, label) + dice_coeff_loss(pred, label)
        loss.backward()  # buggy: raises here
        optimizer.step()
print("ok")
