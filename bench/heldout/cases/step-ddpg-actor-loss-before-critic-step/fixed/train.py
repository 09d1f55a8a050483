"""DDPG update step on random transitions from a toy linear system."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

OBS, ACT = 4, 2
GAMMA, TAU = 0.99, 0.05


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(OBS, 32), nn.ReLU(), nn.Linear(32, ACT), nn.Tanh())

    def forward(self, obs):
        return self.net(obs)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(OBS + ACT, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, obs, act):
        return self.net(torch.cat([obs, act], dim=-1))


def soft_update(target, source, tau):
    for t, s in zip(target.parameters(), source.parameters()):
        t.data.mul_(1 - tau).add_(tau * s.data)


actor, critic = Actor(), Critic()
actor_target, critic_target = copy.deepcopy(actor), copy.deepcopy(critic)
actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
A = torch.randn(OBS, OBS) * 0.3
B = torch.randn(ACT, OBS) * 0.3

for it in range(20):
    obs = torch.randn(64, OBS)
    act = torch.rand(64, ACT) * 2 - 1
    next_obs = obs @ A + act @ B
    reward = -(next_obs ** 2).sum(1, keepdim=True)

    with torch.no_grad():
        target_q = reward + GAMMA * critic_target(next_obs, actor_target(next_obs))
    critic_loss = F.mse_loss(critic(obs, act), target_q)
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()

    actor_loss = -critic(obs, actor(obs)).mean()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()

    soft_update(critic_target, critic, TAU)
    soft_update(actor_target, actor, TAU)

param_sum = sum(p.sum().item() for p in actor.parameters())
print(f"final critic_loss {critic_loss.item():.6f} actor_loss {actor_loss.item():.6f} param_sum {param_sum:.6f}")
