"""An A3C learner keeps each rollout in a namedtuple of lists, `self.rollout`, rebuilt by
`_reset_rollout()` at the start of every rollout and filled by appends in `_rollout()`.

`run()` alternates `_rollout()` (which first calls `_reset_rollout()`: a fresh `A3C_Experience` of empty
lists, then appends this rollout's policy and value outputs) and `_backward()` (one loss over the
rollout's lists, one backward, one step). So `policy_vb = self.rollout.policy_vb` in `_backward()` only
ever holds this rollout's outputs; none was backward-ed before.

The model believed (GG003): `policy_vb` carries the previous iteration's graph, which the previous
backward freed. False: the program trains (checked below).

Reduces jingweiz/pytorch-rl (20b3b738ca400b1916197f27a91367878b09803c) core/agents/a3c_single_process.py:181
(GG003).
"""
from collections import namedtuple

import torch
import torch.nn as nn

A3C_Experience = namedtuple('A3C_Experience', 'state0, action, reward, state1, terminal1, policy_vb, value0_vb')


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.policy = nn.Linear(8, 2)
        self.value = nn.Linear(8, 1)

    def forward(self, x):
        h = torch.relu(self.body(x))
        return torch.softmax(self.policy(h), -1), self.value(h)


class A3CLearner(object):
    def __init__(self, rollout_steps=5, steps=4):
        self.model = Model()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.rollout_steps = rollout_steps
        self.steps = steps
        self.train_step = 0
        self.gamma = 0.99
        self._reset_rollout()

    def _reset_rollout(self):
        self.rollout = A3C_Experience(state0=[], action=[], reward=[], state1=[], terminal1=[],
                                      policy_vb=[], value0_vb=[])

    def _forward(self, state_vb):
        p_vb, v_vb = self.model(state_vb)
        action = p_vb.multinomial(1).data[0][0]
        return action, p_vb, v_vb

    def _backward(self):
        rollout_steps = len(self.rollout.reward)
        policy_vb = self.rollout.policy_vb
        action_batch_vb = torch.tensor(self.rollout.action).long()
        policy_log_vb = [torch.log(policy_vb[i]) for i in range(rollout_steps)]
        entropy_vb = [- (policy_log_vb[i] * policy_vb[i]).sum(1) for i in range(rollout_steps)]
        policy_log_vb = [policy_log_vb[i].gather(1, action_batch_vb[i].view(1, 1)) for i in range(rollout_steps)]
        valueT_vb = torch.zeros(1, 1)
        policy_loss_vb = 0.
        value_loss_vb = 0.
        for i in reversed(range(rollout_steps)):
            valueT_vb = self.gamma * valueT_vb + self.rollout.reward[i]
            advantage_vb = valueT_vb - self.rollout.value0_vb[i]
            value_loss_vb = value_loss_vb + 0.5 * advantage_vb.pow(2)
            policy_loss_vb -= policy_log_vb[i] * advantage_vb.detach() + 0.01 * entropy_vb[i]
        loss_vb = policy_loss_vb + 0.5 * value_loss_vb
        loss_vb.backward()
        self.optimizer.step()
        self.train_step += 1

    def _rollout(self):
        self._reset_rollout()
        for _ in range(self.rollout_steps):
            state = torch.rand(1, 4)
            action, p_vb, v_vb = self._forward(state)
            self.rollout.state0.append(state)
            self.rollout.action.append(action)
            self.rollout.reward.append(float(action))
            self.rollout.policy_vb.append(p_vb)
            self.rollout.value0_vb.append(v_vb)

    def run(self):
        while self.train_step < self.steps:
            self.model.zero_grad()
            self._rollout()
            self._backward()


if __name__ == '__main__':
    torch.manual_seed(0)
    A3CLearner().run()
    print('ok')
