import torch
import torch.nn as nn


class LearnedGainFilter(nn.Module):
    """Constant-velocity Kalman filter whose gain is predicted by a small network (KalmanNet-style)."""

    def __init__(self, dt=0.1, hidden=24):
        super().__init__()
        self.register_buffer("F", torch.tensor([[1.0, dt], [0.0, 1.0]]))
        self.gain = nn.Sequential(nn.Linear(3, hidden), nn.Tanh(), nn.Linear(hidden, 2))
        self.x_post = None

    def init_sequence(self, x0):
        self.x_post = x0

    def step(self, y):
        x_prior = self.x_post @ self.F.T
        innovation = y - x_prior[:, :1]
        k = self.gain(torch.cat([innovation, x_prior], dim=-1))
        self.x_post = x_prior + k * innovation
        return self.x_post


def simulate(n_seq, batch, steps, dt=0.1, noise=0.3):
    """Random constant-velocity tracks and their noisy position measurements."""
    out = []
    for _ in range(n_seq):
        vel = torch.randn(batch, 1) * 0.8
        pos0 = torch.randn(batch, 1)
        t = torch.arange(steps, dtype=torch.float32).view(1, -1, 1) * dt
        pos = pos0.unsqueeze(1) + vel.unsqueeze(1) * t
        truth = torch.cat([pos, vel.unsqueeze(1).expand(-1, steps, -1)], dim=-1)
        meas = pos + noise * torch.randn_like(pos)
        out.append((meas, truth))
    return out
