"""Deep Q-learning on random transitions with a target network tracked by Polyak averaging: the TD
target comes from the target network, the online network is regressed onto it, and the target
network is blended towards the online one at every step."""

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

STATE_DIM = 4
ACTIONS = 2
BATCH = 32
STEPS = 5
GAMMA = 0.99
TAU = 0.05


class QNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(STATE_DIM, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.head = nn.Linear(32, ACTIONS)

    def forward(self, state):
        return self.head(self.body(state))


def soft_update(target, source, tau):
    with torch.no_grad():
        for target_param, param in zip(target.parameters(), source.parameters()):
            target_param.mul_(1 - tau).add_(tau * param)


def sample_transitions():
    state = torch.randn(BATCH, STATE_DIM)
    action = torch.randint(0, ACTIONS, (BATCH, 1))
    reward = state[:, 0] - 0.1 * action.squeeze(1).float()
    next_state = state + 0.1 * torch.randn(BATCH, STATE_DIM)
    done = (torch.rand(BATCH) < 0.1).float()
    return state, action, reward, next_state, done


q_net = QNetwork()
target_net = copy.deepcopy(q_net)
optimizer = torch.optim.Adam(q_net.parameters(), lr=1e-3)

for step in range(STEPS):
    state, action, reward, next_state, done = sample_transitions()
    q_value = q_net(state).gather(1, action).squeeze(1)
    td_target = reward + GAMMA * (1 - done) * target_net(next_state).max(dim=1).values
    loss = F.smooth_l1_loss(q_value, td_target)
    soft_update(target_net, q_net, TAU)
    optimizer.zero_grad()
    loss.backward()  # expect: GG011
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f}")
