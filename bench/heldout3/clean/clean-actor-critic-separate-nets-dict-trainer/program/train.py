import torch

from agents import build_agent
from learner import ActorCriticLearner

OBS, ACTIONS, BATCH, UPDATES = 5, 3, 64, 30


def bandit_rewards(obs, actions):
    prefs = torch.stack([obs[:, 0], obs[:, 1], -obs[:, 0] - obs[:, 1]], 1)
    return prefs.gather(1, actions[:, None]).squeeze(1)


if __name__ == "__main__":
    torch.manual_seed(17)
    learner = ActorCriticLearner(build_agent(OBS, ACTIONS))
    for u in range(UPDATES):
        obs = torch.randn(BATCH, OBS)
        with torch.no_grad():
            actions = learner.policy(obs).sample()
        returns = bandit_rewards(obs, actions)
        a_loss, c_loss = learner.update(obs, actions, returns)
        if u % 10 == 0:
            print(f"update {u} actor {a_loss:.4f} critic {c_loss:.4f} return {returns.mean().item():.4f}")
    with torch.no_grad():
        obs = torch.randn(500, OBS)
        greedy_return = bandit_rewards(obs, learner.policy(obs).probs.argmax(1)).mean().item()
    param_sum = sum(p.sum().item() for net in learner.nets.values() for p in net.parameters())
    print(f"actor {a_loss:.4f} critic {c_loss:.4f} greedy {greedy_return:.4f} param_sum {param_sum:.4f}")
