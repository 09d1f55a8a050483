import copy

import torch
import torch.nn.functional as F


class Learner:
    def __init__(self, q_head, gamma=0.9, lr=1e-3, target_every=20):
        self.q = q_head
        self.target = copy.deepcopy(q_head).requires_grad_(False)
        self.opt = torch.optim.Adam(self.q.parameters(), lr=lr)
        self.gamma, self.target_every, self.updates = gamma, target_every, 0

    def update(self, batch):
        z, a, r, z2, done = batch
        q = self.q(z).gather(1, a[:, None]).squeeze(1)
        with torch.no_grad():
            target = r + self.gamma * (1 - done) * self.target(z2).max(1).values
        loss = F.smooth_l1_loss(q, target)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.updates += 1
        if self.updates % self.target_every == 0:
            self.target.load_state_dict(self.q.state_dict())
        return loss.item()
