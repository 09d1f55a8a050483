import argparse

import torch
from torch.distributions import Categorical

from agent import RecurrentActorCritic
from envs import CueEnv


def train(agent, env, optimizer, args):
    hx = torch.zeros(env.n, agent.hid)
    history = []
    for update in range(args.updates):
        log_probs, values, rewards, masks, entropies = [], [], [], [], []
        hx = hx.detach()
        for _ in range(args.rollout):
            logits, value, hx = agent(env.observe(), hx)
            dist = Categorical(logits=logits)
            action = dist.sample()
            reward, done = env.step(action)
            # episodes that just ended start from a blank memory
            hx[done] = 0.0
            log_probs.append(dist.log_prob(action))
            entropies.append(dist.entropy())
            values.append(value)
            rewards.append(reward)
            masks.append(1.0 - done.float())
        with torch.no_grad():
            _, next_value, _ = agent(env.observe(), hx)
        returns, R = [], next_value
        for r, m in zip(reversed(rewards), reversed(masks)):
            R = r + args.gamma * R * m
            returns.insert(0, R)
        returns, values = torch.stack(returns), torch.stack(values)
        adv = returns - values
        loss = (-(torch.stack(log_probs) * adv.detach()).mean()
                + 0.5 * adv.pow(2).mean() - 0.01 * torch.stack(entropies).mean())
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
        optimizer.step()
        history.append(torch.stack(rewards).mean().item())
        if update % args.log_every == 0:
            print(f"update {update:3d} loss {loss.item():.4f} reward {history[-1]:.3f}")
    return loss.item(), sum(history[-5:]) / 5


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--updates", type=int, default=20)
    ap.add_argument("--rollout", type=int, default=8)
    ap.add_argument("--n-envs", type=int, default=8)
    ap.add_argument("--gamma", type=float, default=0.9)
    ap.add_argument("--lr", type=float, default=7e-3)
    ap.add_argument("--log-every", type=int, default=5)
    args = ap.parse_args()
    torch.manual_seed(0)
    env = CueEnv(args.n_envs)
    agent = RecurrentActorCritic(env.k + 1, env.k)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.lr)
    final_loss, recent = train(agent, env, optimizer, args)
    param_sum = sum(p.sum().item() for p in agent.parameters())
    print(f"final loss {final_loss:.4f} reward {recent:.3f} param_sum {param_sum:.4f}")
