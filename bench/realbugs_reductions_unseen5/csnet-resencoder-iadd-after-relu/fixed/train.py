"""Fixed twin of ../buggy/train.py: the same program, except that csnet.ResEncoder.forward writes the
shortcut sum out of place (out = out + residual), as commit 0cbe18d does.
torch 2.13: runs and prints "ok". gradguard at 1eed1da: nothing reported.
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
        loss.backward()
        optimizer.step()
print("ok")
