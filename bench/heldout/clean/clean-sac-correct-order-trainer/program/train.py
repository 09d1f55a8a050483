"""Actor-critic update in the order that keeps saved tensors valid."""
import torch
import torch.nn as nn
import torch.nn.functional as F

OBS, ACT = 4, 2


def mlp(i, o):
    return nn.Sequential(nn.Linear(i, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, o))


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = mlp(OBS, 2 * ACT)

    def forward(self, obs):
        mean, log_std = self.net(obs).chunk(2, -1)
        std = log_std.clamp(-5, 2).exp()
        u = mean + std * torch.randn_like(mean)
        a = torch.tanh(u)
        logp = (-0.5 * ((u - mean) / std) ** 2 - std.log()).sum(1, keepdim=True)
        return a, logp - torch.log(1 - a.pow(2) + 1e-6).sum(1, keepdim=True)


class Trainer:
    def __init__(self, alpha=0.2, gamma=0.99, lr=3e-4):
        self.policy, self.q = Policy(), mlp(OBS + ACT, 1)
        self.alpha, self.gamma = alpha, gamma
        self.pi_opt = torch.optim.Adam(self.policy.parameters(), lr=lr)
        self.q_opt = torch.optim.Adam(self.q.parameters(), lr=lr)

    def update(self, obs, act, rew, next_obs):
        with torch.no_grad():
            next_a, next_logp = self.policy(next_obs)
            target = rew + self.gamma * (self.q(torch.cat([next_obs, next_a], 1)) - self.alpha * next_logp)
        q_loss = F.mse_loss(self.q(torch.cat([obs, act], 1)), target)
        self.q_opt.zero_grad()
        q_loss.backward()
        self.q_opt.step()

        new_a, logp = self.policy(obs)
        pi_loss = (self.alpha * logp - self.q(torch.cat([obs, new_a], 1))).mean()
        self.pi_opt.zero_grad()
        pi_loss.backward()
        self.pi_opt.step()
        return q_loss.item(), pi_loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    trainer = Trainer()
    for it in range(15):
        obs = torch.randn(64, OBS)
        act = torch.rand(64, ACT) * 2 - 1
        next_obs = obs + 0.1 * act.repeat(1, OBS // ACT)
        rew = -next_obs.pow(2).sum(1, keepdim=True)
        q_loss, pi_loss = trainer.update(obs, act, rew, next_obs)
    param_sum = sum(p.sum().item() for p in trainer.policy.parameters())
    print(f"final q_loss {q_loss:.6f} pi_loss {pi_loss:.6f} param_sum {param_sum:.6f}")
