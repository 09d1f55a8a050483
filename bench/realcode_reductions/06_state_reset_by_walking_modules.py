"""Neuron state `self.v` reset by `for m in self.modules(): m.reset()` (spikingjelly's reset_net).
Model believed `self.v` survives it and carries the freed graph on (a direct `self.node.reset()` is
understood). Reduces spikingjelly .../cifar10_r11_enabling_spikebased_backpropagation.py:407 GG003."""
import torch
from torch import nn
class IF(nn.Module):
    def __init__(self):
        super().__init__()
        self.v = 0.0
    def forward(self, dv):
        self.v += dv
        return torch.sigmoid(self.v)
    def reset(self):
        self.v = 0.0
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc, self.node = nn.Linear(4, 4), IF()
    def forward(self, x):
        return self.node(self.fc(x))
    def reset_(self):
        for m in self.modules():
            if hasattr(m, "reset"):
                m.reset()
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(2):
    net(torch.randn(2, 4)).pow(2).mean().backward()
    net.reset_()
print("ok")
