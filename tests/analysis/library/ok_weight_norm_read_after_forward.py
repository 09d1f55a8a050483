import torch
import torch.nn as nn
from torch.nn.utils import weight_norm

layer = weight_norm(nn.Linear(4, 4))
opt = torch.optim.SGD(layer.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(2, 4)
    out = layer(x)
    reg = layer.weight.pow(2).sum()
    loss = out.pow(2).sum() + 0.01 * reg
    opt.zero_grad()
    loss.backward()
    opt.step()
