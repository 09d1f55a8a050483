import torch
import torch.nn as nn
import torch.nn.utils.parametrize as P


class Sym(nn.Module):
    def forward(self, w):
        return w.triu() + w.triu(1).T


lin = nn.Linear(4, 4)
P.register_parametrization(lin, "weight", Sym())
opt = torch.optim.SGD(lin.parameters(), lr=0.1)
with P.cached():
    for step in range(3):
        x = torch.randn(2, 4)
        loss = lin(x).pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
