"""REINFORCE as minimalRL writes it: one forward per step into a list, then one backward per item.

Model believed: the list's items share one graph, so each item's backward frees the next one's
(each came from its own forward; they share only the parameters, which are leaves).
Reduces seungeunrho/minimalRL REINFORCE.py:35 (GG002).
"""
import torch
from torch import nn

policy = nn.Linear(4, 2)
opt = torch.optim.SGD(policy.parameters(), lr=0.1)
for episode in range(3):
    data = []
    for t in range(5):
        prob = policy(torch.randn(4)).softmax(0)
        data.append((1.0, prob[0]))
    opt.zero_grad()
    for r, p in data:
        loss = -torch.log(p) * r
        loss.backward()
    opt.step()
print("ok")
