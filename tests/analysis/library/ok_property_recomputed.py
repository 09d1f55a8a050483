import torch
import torch.nn as nn


class Prototypes(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw = nn.Parameter(torch.randn(5, 8))
        self.proj = nn.Linear(8, 5)

    @property
    def normed(self):
        return torch.nn.functional.normalize(self.raw.exp(), dim=1)

    def forward(self, x):
        return self.proj(x) + x @ self.normed.T


model = Prototypes()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(4, 8)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
