import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Linear(4, 4)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.randn(8, 4)
reg = net.weight.pow(2).sum()          # computed once, before the loop
for step in range(20):
    loss = net(x).pow(2).mean() + 1e-3 * reg
    loss.backward(retain_graph=True)
    if loss.item() > 1e3:
        print("loss exploded, skipping the step")
    else:
        opt.step()
        opt.zero_grad()
