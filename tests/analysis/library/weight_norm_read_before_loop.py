import torch
import torch.nn as nn
from torch.nn.utils import weight_norm

layer = weight_norm(nn.Linear(4, 4))
opt = torch.optim.SGD(layer.parameters(), lr=0.1)
w = layer.weight
for step in range(3):
    x = torch.randn(2, 4)
    loss = (x @ w.T).pow(2).sum()
    opt.zero_grad()
    loss.backward()  # expect: GG006
    opt.step()
