# Repository: p-christ/Deep-Reinforcement-Learning-Algorithms-with-PyTorch
# Commit:     4835bac8557fdacff1735eca004e35ea5a4b7443
# Finding:    agents/policy_gradient_agents/REINFORCE.py:75  GG003 state-not-detached (error)
#             "`self.episode_log_probabilities` carries the previous iteration's graph, which the
#              backward at line 75 freed"
# WHY FALSE: learning runs only `if self.time_to_learn()`, and time_to_learn() just returns
# self.done -- the very flag that ends `while not self.done`, so the backward runs at most once per
# loop, and reset_game() empties the list before the next episode. gradguard does not carry the
# condition through the one-line helper (with `if self.done:` written inline it reports nothing).
# NOTE: in the repository this agent is stale/broken code (it calls a missing
# update_next_state_reward_done_and_score() and conduct_action() without its argument), so the real
# file fails earlier with AttributeError/TypeError; the GG003 claim itself is wrong for the
# intended control flow, reproduced below.
import torch
import torch.nn as nn
from torch.distributions import Categorical


class Agent:
    def __init__(self):
        self.policy = nn.Sequential(nn.Linear(4, 2), nn.Softmax(dim=-1))
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=1e-2)
        self.episode_number = 0

    def reset_game(self):
        self.done = False
        self.t = 0
        self.episode_log_probabilities = []

    def step(self):
        while not self.done:
            dist = Categorical(self.policy(torch.randn(1, 4)))
            action = dist.sample()
            self.episode_log_probabilities.append(dist.log_prob(action))
            self.t += 1
            self.done = self.t >= 5
            if self.time_to_learn():
                self.actor_learn()
        self.episode_number += 1

    def actor_learn(self):
        loss = torch.cat([-lp for lp in self.episode_log_probabilities]).sum()
        self.optimizer.zero_grad()
        loss.backward()                      # GG003 reported here
        self.optimizer.step()

    def time_to_learn(self):
        return self.done

    def run_n_episodes(self, n):
        while self.episode_number < n:
            self.reset_game()
            self.step()


Agent().run_n_episodes(3)
print("ok")
