"""n-step A2C with a recurrent (GRUCell) policy on a cue-recall task; updates every N_STEPS env steps."""
import torch
import torch.nn as nn
import torch.nn.functional as F

N_ENVS = 8
EP_LEN = 12
N_STEPS = 5
GAMMA = 0.9


class CueRecall:
    """A cue (0 or 1) is shown at the first step only; reward 1 for each later action equal to it."""

    def reset(self):
        self.t = 0
        self.cue = torch.randint(0, 2, (N_ENVS,))
        return self._obs()

    def _obs(self):
        obs = torch.zeros(N_ENVS, 3)
        if self.t == 0:
            obs[torch.arange(N_ENVS), self.cue] = 1.0
        obs[:, 2] = self.t / EP_LEN
        return obs

    def step(self, action):
        reward = (action == self.cue).float() if self.t > 0 else torch.zeros(N_ENVS)
        self.t += 1
        done = self.t >= EP_LEN
        return self._obs(), reward, done


class RecurrentPolicy(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.hidden = hidden
        self.cell = nn.GRUCell(3, hidden)
        self.pi = nn.Linear(hidden, 2)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs, hx):
        hx = self.cell(obs, hx)
        return self.pi(hx), self.v(hx).squeeze(-1), hx


def train(policy, env, optimizer, total_steps):
    obs = env.reset()
    hx = torch.zeros(N_ENVS, policy.hidden)
    log_probs, values, rewards, entropies = [], [], [], []
    episode_returns, running = [], torch.zeros(N_ENVS)
    for step in range(total_steps):
        logits, value, hx = policy(obs, hx)
        dist = torch.distributions.Categorical(logits=logits)
        action = dist.sample()
        obs, reward, done = env.step(action)
        log_probs.append(dist.log_prob(action))
        values.append(value)
        rewards.append(reward)
        entropies.append(dist.entropy())
        running += reward
        if (step + 1) % N_STEPS == 0 or done:
            with torch.no_grad():
                R = torch.zeros(N_ENVS) if done else policy(obs, hx)[1]
            returns = []
            for r in reversed(rewards):
                R = r + GAMMA * R
                returns.insert(0, R)
            returns, values_t = torch.stack(returns), torch.stack(values)
            advantage = returns - values_t
            loss = (-(torch.stack(log_probs) * advantage.detach()).mean()
                    + 0.5 * advantage.pow(2).mean() - 0.01 * torch.stack(entropies).mean())
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            optimizer.step()
            hx = hx.detach()
            log_probs, values, rewards, entropies = [], [], [], []
        if done:
            episode_returns.append(running.mean().item())
            running = torch.zeros(N_ENVS)
            obs = env.reset()
            hx = torch.zeros(N_ENVS, policy.hidden)
    return episode_returns


def main():
    torch.manual_seed(5)
    policy = RecurrentPolicy()
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
    returns = train(policy, CueRecall(), optimizer, total_steps=EP_LEN * 40)
    param_sum = sum(p.sum().item() for p in policy.parameters())
    print(f"episodes {len(returns)} first {sum(returns[:5]) / 5:.4f}")
    print(f"final return {sum(returns[-5:]) / 5:.4f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
