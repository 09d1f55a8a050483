import torch
import torch.nn as nn

net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.randn(8, 4)
loss = net(x).pow(2).mean()
for step in range(20):
    opt.zero_grad()
    loss.backward()
    opt.step()
