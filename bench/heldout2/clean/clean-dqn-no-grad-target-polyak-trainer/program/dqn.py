import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class DQNLearner:
    def __init__(self, obs_dim, n_actions, gamma=0.9, tau=0.05, lr=2e-3):
        self.online = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                                    nn.Linear(32, n_actions))
        self.target = copy.deepcopy(self.online)
        self.opt = torch.optim.Adam(self.online.parameters(), lr=lr)
        self.gamma, self.tau = gamma, tau

    def td_loss(self, s, a, r, s2, done):
        q = self.online(s).gather(1, a.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            next_q = self.target(s2).max(1).values
            target = r + self.gamma * (1 - done) * next_q
        return F.smooth_l1_loss(q, target)

    @torch.no_grad()
    def polyak_update(self):
        for tp, p in zip(self.target.parameters(), self.online.parameters()):
            tp.lerp_(p, self.tau)

    def update(self, batch):
        loss = self.td_loss(*batch)
        self.polyak_update()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()
