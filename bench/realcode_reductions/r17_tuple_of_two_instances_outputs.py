"""Two instances of one network class called in one tuple assignment, each output backward-ed alone.

Model believed: `v` and `v_next` share a graph, so the first backward frees the second's (GG002);
the same calls on two lines, or two `nn.Linear`s, get no finding. Found while reducing
philtabor/Youtube-Code-Repository ReinforcementLearning/PolicyGradient/SAC/sac_torch.py (not
reported in the corpus, where the two calls are on separate lines).
"""
import torch
from torch import nn


class ValueNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, state):
        return self.fc(state)


value = ValueNet()
target_value = ValueNet()
for step in range(3):
    state = torch.randn(8, 4)
    v, v_next = value(state), target_value(state)
    (v - 1.0).pow(2).mean().backward()
    target_loss = v_next.pow(2).mean()
    target_loss.backward()
print("ok")
