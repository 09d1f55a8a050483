import torch
import torch.nn as nn
from torch.distributions import Categorical


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.actor = nn.Linear(hidden, n_actions)
        self.critic = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = self.body(obs)
        return self.actor(h), self.critic(h).squeeze(-1)


class A2CLearner:
    def __init__(self, net, lr=3e-3, value_coef=0.5, entropy_coef=0.01):
        self.net = net
        self.optimizer = torch.optim.Adam(net.parameters(), lr=lr)
        self.value_coef, self.entropy_coef = value_coef, entropy_coef

    def act(self, obs):
        with torch.no_grad():
            logits, _ = self.net(obs)
        return Categorical(logits=logits).sample()

    def update(self, obs, actions, returns):
        logits, values = self.net(obs)
        dist = Categorical(logits=logits)
        advantages = returns - values.detach()
        actor_loss = -(dist.log_prob(actions) * advantages).mean() - self.entropy_coef * dist.entropy().mean()
        critic_loss = self.value_coef * (returns - values).pow(2).mean()
        self.optimizer.zero_grad()
        (actor_loss + critic_loss).backward()
        nn.utils.clip_grad_norm_(self.net.parameters(), 0.5)
        self.optimizer.step()
        return actor_loss.item(), critic_loss.item()
