"""Advantage actor-critic on a contextual bandit, one loss, one backward."""
import torch
import torch.nn as nn
from torch.distributions import Categorical

OBS, ACTIONS = 6, 3


class ActorCritic(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(OBS, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, ACTIONS)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.trunk(obs)
        return self.pi(h), self.v(h).squeeze(-1)


def update(model, optimizer, obs, value_coef=0.5, entropy_coef=0.01):
    logits, values = model(obs)
    dist = Categorical(logits=logits)
    actions = dist.sample()
    rewards = (actions == obs[:, :ACTIONS].argmax(1)).float()
    advantage = rewards - values
    actor_loss = -(dist.log_prob(actions) * advantage.detach()).mean()
    critic_loss = advantage.pow(2).mean()
    loss = actor_loss + value_coef * critic_loss - entropy_coef * dist.entropy().mean()
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optimizer.step()
    return rewards.mean().item()


def main():
    torch.manual_seed(0)
    model = ActorCritic()
    optimizer = torch.optim.RMSprop(model.parameters(), lr=7e-4)
    rewards = [update(model, optimizer, torch.randn(32, OBS)) for _ in range(30)]
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final reward {sum(rewards[-5:]) / 5:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
