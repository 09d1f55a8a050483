import torch
import torch.nn as nn


class Rotary(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.freq = nn.Parameter(torch.randn(dim))
        self.cache = {}

    def forward(self, x):
        n = x.shape[0]
        if n not in self.cache:
            t = torch.arange(n).float()
            self.cache[n] = torch.outer(t, self.freq).cos()
        return x * self.cache[n]


rot = Rotary(4)
opt = torch.optim.SGD(rot.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(6, 4)
    loss = rot(x).pow(2).sum()
    opt.zero_grad()
    loss.backward()  # expect: GG003
    opt.step()
