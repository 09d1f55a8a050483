"""The list form of 01: outputs collected per step, backward every 2 steps, the list reset there.

Model believed: `rec` carries the previous iteration's (freed) graph into the next backward.
Reduces jeshraghian/snntorch snntorch/backprop.py:316 (GG003) and :363 (GG002), TBPTT.
"""
import torch
from torch import nn

net = nn.Linear(4, 4)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
rec = []
for step in range(6):
    rec.append(net(torch.randn(2, 4)))
    if step % 2 == 1:
        loss = torch.stack(rec).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        rec = []
print("ok")
