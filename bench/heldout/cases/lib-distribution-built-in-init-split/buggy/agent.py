import torch
import torch.nn as nn
from torch.distributions import Categorical


class BanditAgent(nn.Module):
    """Softmax policy over arms, trained by REINFORCE."""

    def __init__(self, n_arms):
        super().__init__()
        self.logits = nn.Parameter(torch.zeros(n_arms))
        self.policy = Categorical(logits=self.logits)

    def act(self):
        action = self.policy.sample()
        return action.item(), self.policy.log_prob(action)

    def greedy(self):
        return int(self.logits.argmax())
