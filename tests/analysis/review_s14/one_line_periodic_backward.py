import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
losses = []
for step in range(20):
    losses.append(net(torch.randn(8, 4)).pow(2).mean())
    if (step + 1) % 4 == 0: torch.stack(losses).mean().backward()
    if (step + 1) % 4 == 0: opt.step(); opt.zero_grad()
