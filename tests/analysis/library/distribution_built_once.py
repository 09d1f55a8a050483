import torch
import torch.nn as nn
from torch.distributions import Categorical

policy = nn.Linear(4, 3)
opt = torch.optim.Adam(policy.parameters(), lr=0.01)
state = torch.randn(4)
dist = Categorical(logits=policy(state))
for step in range(3):
    a = dist.sample()
    loss = -dist.log_prob(a)
    opt.zero_grad()
    loss.backward()  # expect: GG006
    opt.step()
