import torch
from torch.distributions import Categorical


def collect(model, n_envs, obs_dim, n_actions):
    """One-step episodes: the reward is 1 for the action matching the argmax feature."""
    obs = torch.randn(n_envs, obs_dim)
    logits, values = model(obs)
    dist = Categorical(logits=logits)
    actions = dist.sample()
    rewards = (actions == obs[:, :n_actions].argmax(1)).float()
    return dist.log_prob(actions), values, rewards, dist.entropy()
