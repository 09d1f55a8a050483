import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
feats = []
model[0].register_forward_hook(lambda m, i, o: feats.append(o))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(2, 4)
    out = model(x)
    loss = out.pow(2).sum() + sum(f.pow(2).sum() for f in feats)
    opt.zero_grad()
    loss.backward()  # expect: GG003
    opt.step()
