"""DQN with a feature encoder; the encoder features are stored in the replay buffer."""
import copy

import torch
import torch.nn.functional as F

from chain import ChainEnv
from nets import make_encoder, make_q_head
from replay import ReplayBuffer

torch.manual_seed(0)

N_STATES, N_ACTIONS = 6, 2
GAMMA, EPS = 0.9, 0.3
BATCH, STEPS = 16, 60

env = ChainEnv(N_STATES)
encoder = make_encoder(N_STATES)
q_head = make_q_head(16, N_ACTIONS)
target_encoder, target_head = copy.deepcopy(encoder), copy.deepcopy(q_head)
optimizer = torch.optim.Adam(list(encoder.parameters()) + list(q_head.parameters()), lr=1e-3)
buffer = ReplayBuffer(500)

obs = env.reset()
losses = []
for step in range(STEPS):
    z = encoder(obs)
    if torch.rand(()) < EPS:
        action = int(torch.randint(0, N_ACTIONS, ()))
    else:
        action = int(q_head(z).argmax())
    next_obs, reward, done = env.step(action)
    with torch.no_grad():
        z_next = target_encoder(next_obs)
    buffer.push(z.detach(), action, reward, z_next, done)
    obs = env.reset() if done else next_obs

    if len(buffer) >= BATCH:
        zb, ab, rb, z2b, db = buffer.sample(BATCH)
        q_sa = q_head(zb).gather(1, ab.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            target = rb + GAMMA * (1 - db) * target_head(z2b).max(1).values
        loss = F.smooth_l1_loss(q_sa, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())

param_sum = sum(p.sum().item() for p in q_head.parameters())
print(f"final loss {losses[-1]:.6f} param_sum {param_sum:.6f}")
