"""An ACER learner keeps each rollout in a namedtuple of lists rebuilt by `_reset_rollout()` and
backward-s in two stages: the policy loss only up to the network's output (`autograd.grad` to a detached
copy of each policy output), then `backward(policy_vb, grad_tensors=..., retain_graph=True)` followed by
the value and entropy loss, which goes through the Q outputs `self.rollout.q0_vb[i]` and again through
the policy outputs (kept by the first stage's `retain_graph`).

Every `_on_policy_rollout()` starts with `_reset_rollout()` (a fresh `ACER_On_Policy_Experience` of
empty lists) and appends this rollout's outputs; `_backward()` runs once per rollout, so every graph it
backward-s is this rollout's, and the second stage is the last use of the retained one.

The original reports GG006 on the second-stage backward ("`self.rollout.q0_vb` was computed once from
tensors that require grad; the backward freed its graph, and this iteration uses it again"). This
reduction keeps the belief but not the rule: on the same line it reports GG003 ("`self.rollout.q0_vb`
carries the previous iteration's graph"), and GG001 on the first stage ("`entropy_loss_vb` is
backward-ed again"). All false: the program trains (checked below). Written with `.detach()
.requires_grad_()` in place of `Variable(x.data, requires_grad=True)` the copies also draw a false GG007
at the `autograd.grad` line. The closer shapes tried (the off-policy replay arm, the first-order TRPO
arm) did not bring GG006 back.

Reduces jingweiz/pytorch-rl (20b3b738ca400b1916197f27a91367878b09803c) core/agents/acer_single_process.py:315
(GG006 there). The published code calls `backward(variables=..., grad_variables=...)`, torch 0.3's names.
"""
from collections import namedtuple

import torch
import torch.nn as nn
from torch.autograd import Variable, backward, grad

ACER_On_Policy_Experience = namedtuple('ACER_On_Policy_Experience',
                                       'state0, action, reward, state1, terminal1, policy_vb, q0_vb, value0_vb')


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.policy = nn.Linear(8, 2)
        self.q = nn.Linear(8, 2)

    def forward(self, x):
        h = torch.relu(self.body(x))
        p = torch.softmax(self.policy(h), -1)
        q = self.q(h)
        return p, q, (p * q).sum(1, keepdim=True)


class ACERLearner(object):
    def __init__(self, rollout_steps=5, steps=4):
        self.model = Model()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.rollout_steps, self.steps, self.train_step, self.gamma = rollout_steps, steps, 0, 0.99
        self._reset_rollout()

    def _reset_rollout(self):
        self.rollout = ACER_On_Policy_Experience(state0=[], action=[], reward=[], state1=[], terminal1=[],
                                                 policy_vb=[], q0_vb=[], value0_vb=[])

    def _backward(self, unsplitted_policy_vb=None):
        on_policy = unsplitted_policy_vb is None
        rollout_steps = len(self.rollout.reward)
        action_batch_vb = torch.tensor(self.rollout.action).long().view(rollout_steps, -1, 1)
        if on_policy:
            policy_vb = self.rollout.policy_vb
            detached_policy_vb = [Variable(self.rollout.policy_vb[i].data, requires_grad=True) for i in range(rollout_steps)]
        else:
            policy_vb = unsplitted_policy_vb
            detached_policy_vb = [torch.cat([p.detach().requires_grad_() for p in self.rollout.policy_vb[i]]) for i in range(rollout_steps)]
        detached_policy_log_vb = [torch.log(detached_policy_vb[i]) for i in range(rollout_steps)]
        detached_policy_log_vb = [detached_policy_log_vb[i].gather(1, action_batch_vb[i]) for i in range(rollout_steps)]
        entropy_vb = [- (policy_vb[i].log() * policy_vb[i]).sum(1, keepdim=True).mean(0) for i in range(rollout_steps)]
        policy_grad_vb = []
        QretT_vb = torch.zeros(1, 1)
        entropy_loss_vb = 0.
        value_loss_vb = 0.
        for i in reversed(range(rollout_steps)):
            QretT_vb = self.gamma * QretT_vb + self.rollout.reward[i]
            advantage_vb = QretT_vb - self.rollout.value0_vb[i]
            detached_policy_loss_vb = - (detached_policy_log_vb[i] * advantage_vb.detach()).mean(0)
            policy_grad_vb.append(grad(outputs=detached_policy_loss_vb, inputs=detached_policy_vb[i], retain_graph=False, only_inputs=True)[0])
            entropy_loss_vb -= entropy_vb[i]
            Q_vb = self.rollout.q0_vb[i].gather(1, action_batch_vb[i])
            value_loss_vb += ((QretT_vb - Q_vb) ** 2 / 2).mean(0)
            QretT_vb = (QretT_vb - Q_vb.detach()) + self.rollout.value0_vb[i].detach()
        self.model.zero_grad()
        backward(policy_vb, grad_tensors=policy_grad_vb, retain_graph=True)
        (value_loss_vb + 0.01 * entropy_loss_vb).backward()
        self.optimizer.step()
        self.train_step += 1

    def _on_policy_rollout(self):
        self._reset_rollout()
        for _ in range(self.rollout_steps):
            state = torch.rand(1, 4)
            p_vb, q_vb, v_vb = self.model(state)
            action = p_vb.multinomial(1).data[0][0]
            self.rollout.state0.append(state)
            self.rollout.action.append(action)
            self.rollout.reward.append(float(action))
            self.rollout.policy_vb.append(p_vb)
            self.rollout.q0_vb.append(q_vb)
            self.rollout.value0_vb.append(v_vb)

    def run(self):
        while self.train_step < self.steps:
            self.model.zero_grad()
            self._on_policy_rollout()
            self._backward()


if __name__ == '__main__':
    torch.manual_seed(0)
    ACERLearner().run()
    print('ok')
