"""Two instances of one network class, each owning the optimizer it builds over `self.parameters()`
(philtabor's SAC: `self.value` and `self.target_value` are both `ValueNetwork`s).

Model believed: `value.optimizer.step()` changes the parameters of `target_value` too, so the
target's output computed before that step is backward-ed through stale saved weights (GG011); without
the step there is no finding, and with two different classes neither.
Reduces philtabor/Youtube-Code-Repository ReinforcementLearning/PolicyGradient/SAC/sac_torch.py:123.
"""
import torch
from torch import nn


class ValueNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.optimizer = torch.optim.SGD(self.parameters(), lr=0.1)

    def forward(self, state):
        return self.fc(state)


value = ValueNet()
target_value = ValueNet()
for step in range(3):
    state = torch.randn(8, 4)
    v = value(state)
    v_next = target_value(state)
    value.optimizer.zero_grad()
    (v - 1.0).pow(2).mean().backward()
    value.optimizer.step()
    target_loss = v_next.pow(2).mean()
    target_loss.backward()
print("ok")
