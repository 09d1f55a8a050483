import torch
import torch.nn as nn


class QNet(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, n_actions))

    def forward(self, obs):
        return self.net(obs)


def chain_transitions(n, n_states=6, g=None):
    """Offline data from a random policy on a chain: action 1 moves right, 0 moves left;
    reward 1 for reaching the right end."""
    s = torch.randint(n_states, (n,), generator=g)
    a = torch.randint(2, (n,), generator=g)
    s2 = (s + 2 * a - 1).clamp(0, n_states - 1)
    r = (s2 == n_states - 1).float()
    done = r.bool()
    onehot = torch.eye(n_states)
    return onehot[s], a, r, onehot[s2], done
