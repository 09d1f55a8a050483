"""Gradient bandit (REINFORCE with a running-average baseline) on a 5-armed Gaussian bandit."""
import torch

from agent import BanditAgent
from bandit import GaussianBandit

torch.manual_seed(0)

STEPS = 60
LR = 0.1

MEANS = [0.1, 0.5, -0.2, 1.0, 0.3]


def greedy_value(agent, bandit, pulls=20):
    arm = agent.greedy()
    return sum(bandit.pull(arm) for _ in range(pulls)) / pulls


bandit = GaussianBandit(MEANS)
agent = BanditAgent(n_arms=len(MEANS))
optimizer = torch.optim.SGD(agent.parameters(), lr=LR)

baseline = 0.0
total_reward = 0.0
for t in range(1, STEPS + 1):
    action, log_prob = agent.act()
    reward = bandit.pull(action)
    total_reward += reward

    loss = -(reward - baseline) * log_prob
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

    baseline += (reward - baseline) / t

regret = STEPS * max(MEANS) - total_reward
probs = torch.softmax(agent.logits.detach(), 0)
value = greedy_value(agent, bandit)
print(f"final regret {regret:.6f} p_best {probs[3].item():.6f} greedy {agent.greedy()} value {value:.6f}")
