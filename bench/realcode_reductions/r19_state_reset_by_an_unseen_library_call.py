"""A spiking network whose neurons keep their membrane potential in an attribute between calls, reset
after each step by a library function the analysis cannot see, as spikingjelly's examples write it
(`functional.reset_net(self)`: it walks `net.modules()` through a cache of collected modules).

Model believed: a call it has neither a fact nor the source for leaves the objects it is given as they
were, so `self.v` still carried the previous step's graph into the next backward (GG003).
Reduces fangwei123456/spikingjelly activation_based/examples/cifar10_r11_enabling_spikebased_backpropagation.py:407.
"""
import torch
import torch.nn as nn
from somelib import functional


class LIF(nn.Module):
    def __init__(self):
        super().__init__()
        self.v = 0.0

    def forward(self, x):
        self.v = self.v * 0.9 + x
        return self.v

    def reset(self):
        self.v = 0.0


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.lif = LIF()

    def forward(self, x):
        return self.lif(self.fc(x))

    def reset_(self):
        functional.reset_net(self)


net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(10):
    out = net(torch.randn(2, 4))
    loss = out.pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    net.reset_()
