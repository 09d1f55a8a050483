"""REINFORCE on a tiny corridor, after pytorch/examples' reinforcement_learning/reinforce.py."""
import torch
import torch.optim as optim

from corridor import Corridor
from policy import Policy, select_action

torch.manual_seed(0)

gamma = 0.99
eps = 1e-6

env = Corridor()
policy = Policy(obs_dim=7, n_actions=2)
optimizer = optim.Adam(policy.parameters(), lr=1e-2)


def finish_episode():
    R = 0
    returns = []
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps) if len(returns) > 1 else returns
    policy_loss = []
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    return policy_loss.item()


def main():
    running_reward = 0.0
    for i_episode in range(1, 16):
        state, ep_reward = env.reset(), 0.0
        done = False
        while not done:
            action = select_action(policy, state)
            state, reward, done = env.step(action)
            policy.rewards.append(reward)
            ep_reward += reward
        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        loss = finish_episode()
    param_sum = sum(p.sum().item() for p in policy.parameters())
    print(f"final loss {loss:.6f} running_reward {running_reward:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
