"""PPO (clipped objective) on a contextual bandit: rollout, then several epochs of minibatch updates."""
import torch
import torch.nn as nn

N_ARMS = 4
OBS_DIM = 6
ROLLOUT = 256
PPO_EPOCHS = 4
MINIBATCH = 64
CLIP = 0.2


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(OBS_DIM, 32), nn.Tanh(), nn.Linear(32, N_ARMS))

    def dist(self, obs):
        return torch.distributions.Categorical(logits=self.net(obs))


def reward_fn(obs, action, w):
    best = (obs @ w).argmax(-1)
    return (action == best).float() + 0.1 * torch.randn(action.shape)


@torch.no_grad()
def collect(policy, w):
    obs = torch.randn(ROLLOUT, OBS_DIM)
    dist = policy.dist(obs)
    actions = dist.sample()
    old_log_probs = dist.log_prob(actions)
    rewards = reward_fn(obs, actions, w)
    advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-8)
    return obs, actions, old_log_probs, advantages, rewards.mean().item()


def ppo_update(policy, optimizer, obs, actions, old_log_probs, advantages):
    for _ in range(PPO_EPOCHS):
        perm = torch.randperm(ROLLOUT)
        for i in range(0, ROLLOUT, MINIBATCH):
            idx = perm[i:i + MINIBATCH]
            dist = policy.dist(obs[idx])
            ratio = torch.exp(dist.log_prob(actions[idx]) - old_log_probs[idx])
            surr = torch.min(ratio * advantages[idx], ratio.clamp(1 - CLIP, 1 + CLIP) * advantages[idx])
            loss = -surr.mean() - 0.01 * dist.entropy().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return loss.item()


def main():
    torch.manual_seed(23)
    w = torch.randn(OBS_DIM, N_ARMS)
    policy = Policy()
    optimizer = torch.optim.Adam(policy.parameters(), lr=3e-3)
    for it in range(8):
        obs, actions, old_log_probs, advantages, mean_reward = collect(policy, w)
        loss = ppo_update(policy, optimizer, obs, actions, old_log_probs, advantages)
        print(f"iter {it} reward {mean_reward:.4f}")
    param_sum = sum(p.sum().item() for p in policy.parameters())
    print(f"final loss {loss:.4f} reward {mean_reward:.4f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
