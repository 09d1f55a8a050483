from collections import deque

import torch


class ReplayBuffer:
    def __init__(self, capacity):
        self.buffer = deque(maxlen=capacity)

    def push(self, state, action, reward, next_state, done):
        self.buffer.append((state, action, reward, next_state, done))

    def sample(self, batch_size):
        idx = torch.randint(0, len(self.buffer), (batch_size,)).tolist()
        states, actions, rewards, next_states, dones = zip(*[self.buffer[i] for i in idx])
        return (torch.stack(states), torch.tensor(actions), torch.tensor(rewards),
                torch.stack(next_states), torch.tensor(dones, dtype=torch.float32))

    def __len__(self):
        return len(self.buffer)
