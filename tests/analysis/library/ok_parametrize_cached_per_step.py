import torch
import torch.nn as nn
import torch.nn.utils.parametrize as P


class Spd(nn.Module):
    def forward(self, w):
        return w @ w.T + 1e-3 * torch.eye(w.shape[0])


lin = nn.Linear(4, 4)
P.register_parametrization(lin, "weight", Spd())
opt = torch.optim.SGD(lin.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(2, 4)
    with P.cached():
        loss = lin(x).pow(2).sum() + lin.weight.trace()
    opt.zero_grad()
    loss.backward()
    opt.step()
