import torch

from a2c import A2CLearner, ActorCritic

CFG = {"n_arms": 4, "context_dim": 6, "batch": 64, "updates": 30, "log_interval": 10}


def contextual_bandit(batch, g, W):
    ctx = torch.randn(batch, CFG["context_dim"], generator=g)
    mean_reward = ctx @ W
    return ctx, mean_reward


if __name__ == "__main__":
    torch.manual_seed(6)
    g = torch.Generator().manual_seed(6)
    W = torch.randn(CFG["context_dim"], CFG["n_arms"], generator=g)
    learner = A2CLearner(ActorCritic(CFG["context_dim"], CFG["n_arms"]))
    for update in range(CFG["updates"]):
        ctx, mean_reward = contextual_bandit(CFG["batch"], g, W)
        actions = learner.act(ctx)
        rewards = mean_reward.gather(1, actions[:, None]).squeeze(1) + 0.1 * torch.randn(CFG["batch"], generator=g)
        a_loss, c_loss = learner.update(ctx, actions, rewards)
        if update % CFG["log_interval"] == 0:
            print(f"update {update} actor {a_loss:.4f} critic {c_loss:.4f} reward {rewards.mean().item():.4f}")
    ctx, mean_reward = contextual_bandit(512, g, W)
    greedy = learner.net(ctx)[0].argmax(1)
    regret = (mean_reward.max(1).values - mean_reward.gather(1, greedy[:, None]).squeeze(1)).mean().item()
    param_sum = sum(p.sum().item() for p in learner.net.parameters())
    print(f"actor {a_loss:.4f} critic {c_loss:.4f} regret {regret:.4f} param_sum {param_sum:.4f}")
