import torch.nn as nn


class ObsEncoder(nn.Module):
    """Stand-in for a pretrained perception model; its weights are not trained here."""

    def __init__(self, obs_dim, feat_dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, feat_dim))

    def forward(self, obs):
        return self.net(obs)


class QHead(nn.Module):
    def __init__(self, feat_dim, n_actions):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(feat_dim, 32), nn.ReLU(), nn.Linear(32, n_actions))

    def forward(self, z):
        return self.net(z)
