"""DDPG on random transitions: an actor and a critic, each with a target copy whose parameters are
frozen and tracked by Polyak averaging; the critic regresses onto the target critic's value of the
target actor's action, the actor climbs the critic."""

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

STATE_DIM = 3
ACTION_DIM = 1
BATCH = 16
STEPS = 5
GAMMA = 0.99
TAU = 0.01


def mlp(n_in, n_out, last=None):
    layers = [nn.Linear(n_in, 32), nn.ReLU(), nn.Linear(32, n_out)]
    return nn.Sequential(*layers, last) if last is not None else nn.Sequential(*layers)


@torch.no_grad()
def polyak(target, source, tau):
    for target_param, param in zip(target.parameters(), source.parameters()):
        target_param.copy_(tau * param + (1 - tau) * target_param)


def sample_transitions():
    state = torch.randn(BATCH, STATE_DIM)
    action = torch.rand(BATCH, ACTION_DIM) * 2 - 1
    reward = -(state[:, :1] - action).pow(2)
    return state, action, reward, state + 0.1 * torch.randn(BATCH, STATE_DIM)


actor = mlp(STATE_DIM, ACTION_DIM, nn.Tanh())
critic = mlp(STATE_DIM + ACTION_DIM, 1)
actor_target, critic_target = copy.deepcopy(actor), copy.deepcopy(critic)
for network in (actor_target, critic_target):
    for p in network.parameters():
        p.requires_grad = False
actor_optimizer = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_optimizer = torch.optim.Adam(critic.parameters(), lr=1e-3)

for step in range(STEPS):
    state, action, reward, next_state = sample_transitions()
    next_action = actor_target(next_state)
    target_q = reward + GAMMA * critic_target(torch.cat([next_state, next_action], dim=1))
    critic_loss = F.mse_loss(critic(torch.cat([state, action], dim=1)), target_q)
    critic_optimizer.zero_grad()
    critic_loss.backward()
    critic_optimizer.step()
    actor_loss = -critic(torch.cat([state, actor(state)], dim=1)).mean()
    actor_optimizer.zero_grad()
    actor_loss.backward()
    actor_optimizer.step()
    polyak(actor_target, actor, TAU)
    polyak(critic_target, critic, TAU)
    print(f"step {step}: critic {critic_loss.item():.4f}, actor {actor_loss.item():.4f}")
