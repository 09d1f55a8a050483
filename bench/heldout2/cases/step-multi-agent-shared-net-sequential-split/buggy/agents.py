import torch
import torch.nn as nn
import torch.nn.functional as F


class SharedPolicy(nn.Module):
    """One network for all agents; the agent id is appended to the observation."""

    def __init__(self, obs_dim, n_agents, n_actions, hidden=32):
        super().__init__()
        self.n_agents = n_agents
        self.net = nn.Sequential(nn.Linear(obs_dim + n_agents, hidden), nn.ReLU(), nn.Linear(hidden, n_actions))

    def forward(self, obs, agent_id):
        ident = F.one_hot(torch.full((obs.size(0),), agent_id), self.n_agents).float()
        return self.net(torch.cat([obs, ident], dim=-1))


class Agent:
    def __init__(self, agent_id, policy, preferred_shift):
        self.id = agent_id
        self.policy = policy
        self.shift = preferred_shift

    def reinforce_loss(self, obs):
        """One-step REINFORCE: the reward is 1 when the action matches this agent's target rule."""
        dist = torch.distributions.Categorical(logits=self.policy(obs, self.id))
        actions = dist.sample()
        target = (obs.argmax(-1) + self.shift) % obs.size(-1)
        reward = (actions == target).float()
        loss = -(dist.log_prob(actions) * (reward - reward.mean())).mean()
        return loss, reward.mean().item()
