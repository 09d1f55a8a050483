# Repository: p-christ/Deep-Reinforcement-Learning-Algorithms-with-PyTorch
# Commit:     4835bac8557fdacff1735eca004e35ea5a4b7443
# Finding:    agents/actor_critic_agents/A3C.py:225  GG011 backward-after-optimizer-step (error)
#             "`total_loss` goes through `critic_loss`'s graph, but the optimizer step at line 127
#              has since changed in place the parameters that graph saved"
# Line 127 is `next_state, reward, done, _ = self.environment.step(action)` -- a gym environment step.
# WHY FALSE: any `.step(...)` on a receiver gradguard cannot resolve (here an environment handed to
# the constructor / a function parameter) is taken to be an optimizer step that modifies the model's
# parameters in place. Environment `.step()` touches no parameter, so the backward is fine.
# (Same finding when `env` is a plain function parameter; not when `env = Env()` is visible locally.)
import torch
import torch.nn as nn


class Env:
    def step(self, action):
        return torch.randn(4), 1.0, False, {}


class Worker:
    def __init__(self, environment):
        self.environment = environment

    def run(self, model):
        for _ in range(3):
            value = model(torch.randn(4))
            next_state, reward, done, _ = self.environment.step(0)   # <- taken as optimizer.step()
            loss = (value ** 2).mean()
            loss.backward()                                          # GG011 reported here


Worker(Env()).run(nn.Linear(4, 1))
print("ok")
