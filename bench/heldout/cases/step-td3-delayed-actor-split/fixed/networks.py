import torch
import torch.nn as nn
import torch.nn.functional as F


class Actor(nn.Module):
    def __init__(self, state_dim, action_dim, max_action=1.0):
        super().__init__()
        self.l1 = nn.Linear(state_dim, 64)
        self.l2 = nn.Linear(64, 64)
        self.l3 = nn.Linear(64, action_dim)
        self.max_action = max_action

    def forward(self, state):
        a = F.relu(self.l1(state))
        a = F.relu(self.l2(a))
        return self.max_action * torch.tanh(self.l3(a))


class Critic(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.q1_net = nn.Sequential(nn.Linear(state_dim + action_dim, 64), nn.ReLU(), nn.Linear(64, 1))
        self.q2_net = nn.Sequential(nn.Linear(state_dim + action_dim, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, state, action):
        sa = torch.cat([state, action], 1)
        return self.q1_net(sa), self.q2_net(sa)

    def q1(self, state, action):
        return self.q1_net(torch.cat([state, action], 1))
