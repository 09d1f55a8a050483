import torch
import torch.nn as nn

net = nn.Linear(4, 4)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
h = torch.zeros(1, 4)
for step in range(20):
    if step % 2 == 0: h = net(h)
    else: h = net(h) * 2
    loss = h.sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
