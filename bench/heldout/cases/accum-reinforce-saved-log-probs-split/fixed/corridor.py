import torch


class Corridor:
    """1-D corridor: start in the middle, reward 1 at the right end, episode of at most `horizon` steps."""

    def __init__(self, length=7, horizon=8):
        self.length, self.horizon = length, horizon

    def reset(self):
        self.pos, self.t = self.length // 2, 0
        return self._obs()

    def _obs(self):
        obs = torch.zeros(self.length)
        obs[self.pos] = 1.0
        return obs

    def step(self, action):
        self.pos = max(0, min(self.length - 1, self.pos + (1 if action == 1 else -1)))
        self.t += 1
        reward = 1.0 if self.pos == self.length - 1 else 0.0
        done = reward > 0 or self.t >= self.horizon
        return self._obs(), reward, done
