import functools

import torch
import torch.nn as nn


class Gaussian:
    def __init__(self, mean, log_std):
        self.mean = mean
        self.log_std = log_std

    @functools.cached_property
    def std(self):
        return self.log_std.exp()

    def nll(self, x):
        return ((x - self.mean) / self.std).pow(2).sum() / 2 + self.log_std.sum()


net = nn.Linear(3, 4)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
for step in range(3):
    out = net(torch.randn(2, 3))
    dist = Gaussian(out[:, :2], out[:, 2:])
    loss = dist.nll(torch.randn(2, 2))
    opt.zero_grad()
    loss.backward()
    opt.step()
