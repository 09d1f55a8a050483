import torch


def rollout(steps, batch, obs_dim=4, act_dim=2):
    """A toy linear system driven by random actions; reward is minus the distance to the origin."""
    A = 0.9 * torch.linalg.qr(torch.randn(obs_dim, obs_dim))[0]
    B = 0.3 * torch.randn(act_dim, obs_dim)
    x = torch.randn(batch, obs_dim)
    obs, acts, rews = [], [], []
    for _ in range(steps):
        a = torch.randn(batch, act_dim).clamp(-1, 1)
        x = x @ A.T + a @ B + 0.02 * torch.randn(batch, obs_dim)
        obs.append(x)
        acts.append(a)
        rews.append(-x.norm(dim=-1))
    return torch.stack(obs, 1), torch.stack(acts, 1), torch.stack(rews, 1)


def sequence_batches(obs, acts, rews, length):
    """Consecutive windows of one long rollout, in order (the model state flows between them)."""
    for start in range(0, obs.size(1) - length + 1, length):
        sl = slice(start, start + length)
        yield obs[:, sl], acts[:, sl], rews[:, sl]
