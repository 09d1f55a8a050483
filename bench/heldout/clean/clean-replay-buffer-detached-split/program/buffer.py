import random
from collections import deque

import torch


class Replay:
    def __init__(self, capacity):
        self.data = deque(maxlen=capacity)

    def add(self, *transition):
        self.data.append(transition)

    def sample(self, n):
        batch = random.sample(self.data, n)
        obs, act, rew, nxt, done = zip(*batch)
        return (torch.stack(obs), torch.tensor(act), torch.tensor(rew), torch.stack(nxt),
                torch.tensor(done, dtype=torch.float32))

    def __len__(self):
        return len(self.data)
