"""Neuron state reset by a `reset_net` that caches, per network, weak references to the modules it
resets (spikingjelly's functional.reset_net at afb1322): the first call walks `modules()`, later calls
reset what `ref(module)()` gives back. Model took the cached path for one on which nothing is reset
(an unknown object from an unknown dict, called), so `self.v` seemed to carry the freed graph.
Reduces spikingjelly .../cifar10_r11_enabling_spikebased_backpropagation.py:407 GG003."""
from weakref import WeakKeyDictionary, ref

import torch
from torch import nn

_CACHE = WeakKeyDictionary()


def reset_net(net):
    cached = _CACHE.get(net)
    if cached is not None:
        modules = []
        for weak in cached:
            module = weak()
            if module is None:
                _CACHE.pop(net, None)
                return reset_net(net)
            modules.append(module)
    else:
        modules = [m for m in net.modules() if callable(getattr(m, "reset", None))]
        _CACHE[net] = tuple(ref(m) for m in modules)
    for m in modules:
        m.reset()


class IF(nn.Module):
    def __init__(self):
        super().__init__()
        self.v = 0.0

    def forward(self, dv):
        self.v = self.v + dv
        return torch.sigmoid(self.v)

    def reset(self):
        self.v = 0.0


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc, self.node = nn.Linear(4, 4), IF()

    def forward(self, x):
        return self.node(self.fc(x))


net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(3):
    opt.zero_grad()
    net(torch.randn(2, 4)).pow(2).mean().backward()
    opt.step()
    reset_net(net)
print("ok")
