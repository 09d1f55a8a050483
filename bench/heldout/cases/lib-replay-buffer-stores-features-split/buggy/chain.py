import torch


class ChainEnv:
    """States 0..n-1 on a line; action 1 moves right, 0 moves left; reward at the right end."""

    def __init__(self, n=6):
        self.n = n
        self.s = 0

    def obs(self):
        o = torch.zeros(self.n)
        o[self.s] = 1.0
        return o

    def reset(self):
        self.s = 0
        return self.obs()

    def step(self, action):
        self.s = min(self.n - 1, self.s + 1) if action == 1 else max(0, self.s - 1)
        done = self.s == self.n - 1
        return self.obs(), (1.0 if done else -0.01), done
