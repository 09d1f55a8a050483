"""Advantage actor-critic on a contextual bandit with a shared trunk and one optimizer."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

OBS, ACTIONS = 6, 3


class ActorCritic(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(OBS, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.policy_head = nn.Linear(hidden, ACTIONS)
        self.value_head = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.trunk(obs)
        return self.policy_head(h), self.value_head(h).squeeze(-1)


def reward_fn(obs, actions):
    best = obs[:, :ACTIONS].argmax(1)
    return (actions == best).float() + 0.1 * torch.randn(actions.shape)


def update(model, optimizer, obs, value_coef=0.5, entropy_coef=0.01):
    logits, values = model(obs)
    dist = Categorical(logits=logits)
    actions = dist.sample()
    rewards = reward_fn(obs, actions)
    advantage = rewards - values
    actor_loss = -(dist.log_prob(actions) * advantage.detach()).mean() - entropy_coef * dist.entropy().mean()
    critic_loss = value_coef * advantage.pow(2).mean()
    optimizer.zero_grad()
    (actor_loss + critic_loss).backward()
    nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optimizer.step()
    return rewards.mean().item(), critic_loss.item()


def main():
    torch.manual_seed(0)
    model = ActorCritic()
    optimizer = torch.optim.Adam(model.parameters(), lr=7e-4)
    for it in range(30):
        obs = torch.randn(32, OBS)
        mean_reward, value_loss = update(model, optimizer, obs)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final reward {mean_reward:.6f} value_loss {value_loss:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
