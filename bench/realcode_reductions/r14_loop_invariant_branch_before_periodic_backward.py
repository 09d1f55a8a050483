"""Truncated BPTT (01b) whose step output comes from an `if` on a loop-invariant value (snntorch's
`num_return`, the final layer's arity): outputs collected, backward every 2 steps, the list reset there.

Model believed: `rec` carries the previous iteration's (freed) graph into the next backward. The same
loop with the output computed unconditionally (01b), or with the `if` on a condition that varies per
step, gets no finding; an exhaustive `if`/`else` on the invariant value still does.
Reduces jeshraghian/snntorch snntorch/backprop.py:316 (GG002) and :363 (GG003), TBPTT.
"""
import torch
from torch import nn

net = nn.Linear(4, 4)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
num_return = 2 if isinstance(net, nn.Linear) else 3
rec = []
for step in range(6):
    if num_return == 2:
        out = net(torch.randn(2, 4))
    else:
        out = net(torch.randn(2, 4)) * 2
    rec.append(out)
    if step % 2 == 1:
        loss = torch.stack(rec).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        rec = []
print("ok")
