import random
from collections import deque, namedtuple

import torch

Transition = namedtuple("Transition", "state action reward next_state done")


class ReplayBuffer:
    def __init__(self, capacity, seed=0):
        self.memory = deque(maxlen=capacity)
        self.rng = random.Random(seed)

    def push(self, *args):
        self.memory.append(Transition(*args))

    def sample(self, batch_size):
        batch = Transition(*zip(*self.rng.sample(self.memory, batch_size)))
        return (torch.stack(batch.state), torch.tensor(batch.action), torch.tensor(batch.reward),
                torch.stack(batch.next_state), torch.tensor(batch.done, dtype=torch.float32))

    def __len__(self):
        return len(self.memory)
