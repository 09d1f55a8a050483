"""Truncated BPTT: backward every 3 steps, the state detached in that same branch.

Model believed: on the path where the branch is skipped, `hx` still holds the graph the earlier
backward freed (it holds a graph built since the last detach, never backward-ed yet).
Reduces philtabor/Youtube-Code-Repository ReinforcementLearning/ICM/worker.py:59 (GG003).
"""
import torch
from torch import nn

cell = nn.RNNCell(4, 4)
opt = torch.optim.SGD(cell.parameters(), lr=0.1)
hx = torch.zeros(1, 4)
for step in range(6):
    hx = cell(torch.randn(1, 4), hx)
    if step % 3 == 2:
        loss = hx.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        hx = hx.detach()
print("ok")
