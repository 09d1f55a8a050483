"""One-step actor-critic (TD(0)) on a corridor: the critic is updated first, then the actor uses the TD error."""
import torch
import torch.nn as nn

N_STATES = 6
GAMMA = 0.95
MAX_STEPS = 20


def one_hot(s):
    v = torch.zeros(N_STATES)
    v[s] = 1.0
    return v


def env_step(s, a):
    s2 = max(0, min(N_STATES - 1, s + (1 if a == 1 else -1)))
    done = s2 == N_STATES - 1
    return s2, (1.0 if done else -0.01), done


def train(actor, critic, actor_opt, critic_opt, episodes):
    lengths = []
    for ep in range(episodes):
        s = 0
        for t in range(MAX_STEPS):
            x = one_hot(s)
            dist = torch.distributions.Categorical(logits=actor(x))
            a = dist.sample()
            s2, r, done = env_step(s, a.item())

            value = critic(x).squeeze()
            next_value = torch.zeros(()) if done else critic(one_hot(s2)).squeeze().detach()
            td_target = r + GAMMA * next_value

            critic_loss = (td_target - value).pow(2)
            critic_opt.zero_grad()
            critic_loss.backward()
            critic_opt.step()

            advantage = (td_target - value).detach()
            actor_loss = -dist.log_prob(a) * advantage
            actor_opt.zero_grad()
            actor_loss.backward()
            actor_opt.step()

            s = s2
            if done:
                break
        lengths.append(t + 1)
    return lengths


def main():
    torch.manual_seed(41)
    actor = nn.Sequential(nn.Linear(N_STATES, 16), nn.Tanh(), nn.Linear(16, 2))
    critic = nn.Sequential(nn.Linear(N_STATES, 16), nn.Tanh(), nn.Linear(16, 1))
    actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-2)
    critic_opt = torch.optim.Adam(critic.parameters(), lr=2e-2)
    lengths = train(actor, critic, actor_opt, critic_opt, episodes=40)
    param_sum = sum(p.sum().item() for p in list(actor.parameters()) + list(critic.parameters()))
    print(f"first lengths {lengths[:5]}")
    print(f"final mean_length {sum(lengths[-10:]) / 10:.4f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
