"""One-step actor-critic with a shared trunk split into two heads; the critic step comes first and the
actor uses the TD error computed before it, detached."""
import torch
import torch.nn as nn

N_STATES, GAMMA, MAX_STEPS = 5, 0.9, 16


def one_hot(s):
    return torch.eye(N_STATES)[s]


def env_step(s, a):
    s2 = max(0, min(N_STATES - 1, s + (1 if a == 1 else -1)))
    return s2, (1.0 if s2 == N_STATES - 1 else 0.0), s2 == N_STATES - 1


def train(actor, critic, actor_opt, critic_opt, episodes):
    lengths = []
    for _ in range(episodes):
        s = 0
        for t in range(MAX_STEPS):
            dist = torch.distributions.Categorical(logits=actor(one_hot(s)))
            a = dist.sample()
            s2, r, done = env_step(s, a.item())
            value = critic(one_hot(s)).squeeze()
            with torch.no_grad():
                target = r + (0.0 if done else GAMMA * critic(one_hot(s2)).squeeze())
            td_error = target - value
            advantage = td_error.detach()

            critic_opt.zero_grad()
            td_error.pow(2).backward()
            critic_opt.step()

            actor_opt.zero_grad()
            (-dist.log_prob(a) * advantage).backward()
            actor_opt.step()
            s = s2
            if done:
                break
        lengths.append(t + 1)
    return lengths


def main():
    torch.manual_seed(83)
    actor = nn.Sequential(nn.Linear(N_STATES, 16), nn.Tanh(), nn.Linear(16, 2))
    critic = nn.Sequential(nn.Linear(N_STATES, 16), nn.Tanh(), nn.Linear(16, 1))
    lengths = train(actor, critic, torch.optim.Adam(actor.parameters(), lr=1e-2),
                    torch.optim.Adam(critic.parameters(), lr=2e-2), episodes=40)
    param_sum = sum(p.sum().item() for p in list(actor.parameters()) + list(critic.parameters()))
    print(f"final mean_length {sum(lengths[-10:]) / 10:.4f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
