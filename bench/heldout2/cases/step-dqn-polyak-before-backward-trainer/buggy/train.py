"""DQN with a Polyak-averaged target network on a synthetic MDP, trained from a fixed replay buffer."""
import torch

from dqn import DQNLearner

OBS_DIM, N_ACTIONS = 4, 3


def make_buffer(n, reward_w, trans):
    s = torch.randn(n, OBS_DIM)
    a = torch.randint(0, N_ACTIONS, (n,))
    r = (s * reward_w[a]).sum(-1)
    s2 = torch.tanh(torch.einsum("bi,bij->bj", s, trans[a]))
    done = (torch.rand(n) < 0.1).float()
    return s, a, r, s2, done


def main():
    torch.manual_seed(37)
    reward_w = torch.randn(N_ACTIONS, OBS_DIM)
    trans = torch.randn(N_ACTIONS, OBS_DIM, OBS_DIM) * 0.5
    buffer = make_buffer(2048, reward_w, trans)
    learner = DQNLearner(OBS_DIM, N_ACTIONS)
    for step in range(200):
        idx = torch.randint(0, 2048, (64,))
        loss = learner.update(tuple(t[idx] for t in buffer))
        if step % 50 == 0:
            print(f"step {step} loss {loss:.4f}")
    with torch.no_grad():
        greedy_reward = (buffer[0] * reward_w[learner.online(buffer[0]).argmax(-1)]).sum(-1).mean().item()
    param_sum = sum(p.sum().item() for p in learner.online.parameters())
    print(f"final loss {loss:.4f} greedy_reward {greedy_reward:.4f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
