import torch
import torch.nn as nn


class LatentDynamics(nn.Module):
    """A small deterministic recurrent state-space model: (h, z) state, obs decoder, reward head."""

    def __init__(self, obs_dim, act_dim, h_dim=24, z_dim=8):
        super().__init__()
        self.h_dim, self.z_dim = h_dim, z_dim
        self.cell = nn.GRUCell(z_dim + act_dim, h_dim)
        self.embed = nn.Linear(obs_dim, 16)
        self.posterior = nn.Linear(h_dim + 16, z_dim)
        self.decoder = nn.Linear(h_dim + z_dim, obs_dim)
        self.reward = nn.Linear(h_dim + z_dim, 1)

    def initial_state(self, batch):
        return torch.zeros(batch, self.h_dim), torch.zeros(batch, self.z_dim)

    def observe(self, obs, act, state):
        """Filter a (B, T, .) sequence; returns reconstructions, rewards and the last (h, z)."""
        h, z = state
        recons, rewards = [], []
        for t in range(obs.size(1)):
            h = self.cell(torch.cat([z, act[:, t]], dim=-1), h)
            z = torch.tanh(self.posterior(torch.cat([h, self.embed(obs[:, t])], dim=-1)))
            feat = torch.cat([h, z], dim=-1)
            recons.append(self.decoder(feat))
            rewards.append(self.reward(feat).squeeze(-1))
        return torch.stack(recons, 1), torch.stack(rewards, 1), (h, z)
