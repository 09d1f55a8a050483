"""Soft actor-critic update on synthetic transitions (trainer in the style of rlkit)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

OBS, ACT = 5, 2


def mlp(in_dim, out_dim, hidden=32):
    return nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, out_dim))


class QF(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = mlp(OBS + ACT, 1)

    def forward(self, obs, act):
        return self.net(torch.cat([obs, act], 1))


class TanhGaussianPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = mlp(OBS, 2 * ACT)

    def forward(self, obs):
        mean, log_std = self.net(obs).chunk(2, dim=-1)
        std = log_std.clamp(-5, 2).exp()
        pre_tanh = mean + std * torch.randn_like(mean)
        action = torch.tanh(pre_tanh)
        log_prob = (-0.5 * ((pre_tanh - mean) / std) ** 2 - std.log()).sum(1, keepdim=True)
        log_prob = log_prob - torch.log(1 - action.pow(2) + 1e-6).sum(1, keepdim=True)
        return action, log_prob


class SACTrainer:
    def __init__(self, policy, qf1, qf2, lr=3e-4, alpha=0.2, discount=0.99):
        self.policy, self.qf1, self.qf2 = policy, qf1, qf2
        self.alpha, self.discount = alpha, discount
        self.policy_optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
        self.qf1_optimizer = torch.optim.Adam(qf1.parameters(), lr=lr)
        self.qf2_optimizer = torch.optim.Adam(qf2.parameters(), lr=lr)

    def train_from_torch(self, batch):
        obs, actions, rewards, next_obs, terminals = batch
        new_actions, log_pi = self.policy(obs)
        q_new_actions = torch.min(self.qf1(obs, new_actions), self.qf2(obs, new_actions))
        policy_loss = (self.alpha * log_pi - q_new_actions).mean()

        q1_pred, q2_pred = self.qf1(obs, actions), self.qf2(obs, actions)
        with torch.no_grad():
            new_next_actions, new_log_pi = self.policy(next_obs)
            target_q = torch.min(self.qf1(next_obs, new_next_actions), self.qf2(next_obs, new_next_actions))
            q_target = rewards + (1.0 - terminals) * self.discount * (target_q - self.alpha * new_log_pi)
        qf1_loss = F.mse_loss(q1_pred, q_target)
        qf2_loss = F.mse_loss(q2_pred, q_target)

        self.qf1_optimizer.zero_grad()
        qf1_loss.backward()
        self.qf1_optimizer.step()
        self.qf2_optimizer.zero_grad()
        qf2_loss.backward()
        self.qf2_optimizer.step()

        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()
        return qf1_loss.item(), policy_loss.item()


def random_batch(n=64):
    obs = torch.randn(n, OBS)
    actions = torch.rand(n, ACT) * 2 - 1
    next_obs = obs + 0.1 * torch.cat([actions, actions[:, :1].repeat(1, OBS - ACT)], 1)
    rewards = -next_obs.pow(2).sum(1, keepdim=True)
    return obs, actions, rewards, next_obs, torch.zeros(n, 1)


if __name__ == "__main__":
    torch.manual_seed(0)
    trainer = SACTrainer(TanhGaussianPolicy(), QF(), QF())
    for it in range(15):
        q_loss, pi_loss = trainer.train_from_torch(random_batch())
    param_sum = sum(p.sum().item() for p in trainer.policy.parameters())
    print(f"final qf1_loss {q_loss:.6f} policy_loss {pi_loss:.6f} param_sum {param_sum:.6f}")
