import torch
import torch.nn as nn
from torch.nn.utils import weight_norm

layer = weight_norm(nn.Linear(4, 4))
opt = torch.optim.SGD(layer.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(2, 4)
    reg = layer.weight.pow(2).sum()
    loss = layer(x).pow(2).sum() + 0.01 * reg
    opt.zero_grad()
    loss.backward()  # expect: GG003
    opt.step()
