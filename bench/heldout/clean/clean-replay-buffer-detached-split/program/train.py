"""DQN on a 1-D chain; the buffer keeps observations, the Q-values are recomputed."""
import copy
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

from buffer import Replay

random.seed(0)
torch.manual_seed(0)

N, ACTIONS, GAMMA, EPS = 6, 2, 0.9, 0.3


def one_hot(s):
    o = torch.zeros(N)
    o[s] = 1.0
    return o


qnet = nn.Sequential(nn.Linear(N, 32), nn.ReLU(), nn.Linear(32, ACTIONS))
target = copy.deepcopy(qnet)
optimizer = torch.optim.Adam(qnet.parameters(), lr=1e-3)
replay = Replay(500)

s, losses = 0, []
for step in range(60):
    obs = one_hot(s)
    with torch.no_grad():
        greedy = int(qnet(obs).argmax())
    action = random.randrange(ACTIONS) if random.random() < EPS else greedy
    s2 = min(N - 1, s + 1) if action == 1 else max(0, s - 1)
    done = s2 == N - 1
    replay.add(obs, action, 1.0 if done else -0.01, one_hot(s2), done)
    s = 0 if done else s2
    if len(replay) >= 16:
        o, a, r, o2, d = replay.sample(16)
        q = qnet(o).gather(1, a.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            y = r + GAMMA * (1 - d) * target(o2).max(1).values
        loss = F.smooth_l1_loss(q, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())

param_sum = sum(p.sum().item() for p in qnet.parameters())
print(f"final loss {losses[-1]:.6f} param_sum {param_sum:.6f}")
