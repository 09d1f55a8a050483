"""Spiking MLP with membrane state on the layers; every batch starts from a reset state."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from snn.layers import LIF, reset_states

torch.manual_seed(0)

STEPS_T = 6


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.lif1 = nn.Linear(10, 24), LIF()
        self.fc2, self.lif2 = nn.Linear(24, 2), LIF()

    def forward(self, x):
        out = []
        for _ in range(STEPS_T):
            out.append(self.lif2(self.fc2(self.lif1(self.fc1(x)))))
        return torch.stack(out).sum(0)


x = torch.rand(96, 10)
y = (x[:, :5].sum(1) > x[:, 5:].sum(1)).long()
net = Net()
optimizer = torch.optim.Adam(net.parameters(), lr=5e-3)

for epoch in range(2):
    for xb, yb in zip(x.split(16), y.split(16)):
        reset_states(net)
        loss = F.cross_entropy(net(xb), yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

param_sum = sum(p.sum().item() for p in net.parameters())
print(f"final loss {loss.item():.6f} param_sum {param_sum:.6f}")
