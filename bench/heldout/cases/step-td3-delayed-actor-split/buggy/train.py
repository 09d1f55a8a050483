"""TD3 on transitions sampled from a fixed random dataset (offline, for a quick check)."""
import copy

import torch

from networks import Actor, Critic
from td3 import td3_update

STATE_DIM, ACTION_DIM = 6, 2
BATCH = 64


class Dataset:
    def __init__(self, n):
        self.state = torch.randn(n, STATE_DIM)
        self.action = torch.rand(n, ACTION_DIM) * 2 - 1
        self.next_state = self.state + 0.1 * self.action.repeat(1, STATE_DIM // ACTION_DIM)
        self.reward = -self.next_state.norm(dim=1, keepdim=True)
        self.not_done = torch.ones(n, 1)

    def sample(self, batch_size):
        idx = torch.randint(0, self.state.size(0), (batch_size,))
        return (self.state[idx], self.action[idx], self.next_state[idx], self.reward[idx], self.not_done[idx])


def main():
    torch.manual_seed(0)
    data = Dataset(1000)
    actor, critic = Actor(STATE_DIM, ACTION_DIM), Critic(STATE_DIM, ACTION_DIM)
    actor_target, critic_target = copy.deepcopy(actor), copy.deepcopy(critic)
    actor_optimizer = torch.optim.Adam(actor.parameters(), lr=3e-4)
    critic_optimizer = torch.optim.Adam(critic.parameters(), lr=3e-4)
    for it in range(1, 21):
        critic_loss = td3_update(it, data.sample(BATCH), actor, critic, actor_target, critic_target,
                                 actor_optimizer, critic_optimizer)
    param_sum = sum(p.sum().item() for p in actor.parameters())
    print(f"final critic_loss {critic_loss:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
