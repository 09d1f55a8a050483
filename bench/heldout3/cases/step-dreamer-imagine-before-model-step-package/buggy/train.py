import torch

from dreamer import Actor, Agent, WorldModel

cfg = {"obs_dim": 4, "act_dim": 2, "latent": 16, "horizon": 5, "gamma": 0.95,
       "model_lr": 3e-3, "actor_lr": 1e-3, "updates": 15, "batch": 8, "seq": 10}


def collect(batch, seq, g):
    """Random-policy episodes of a point mass; reward is minus the distance to the origin."""
    pos = torch.randn(batch, 2, generator=g)
    vel = torch.zeros(batch, 2)
    obs, acts, rews = [], [], []
    for _ in range(seq):
        a = torch.rand(batch, 2, generator=g) * 2 - 1
        vel = 0.9 * vel + 0.1 * a
        pos = pos + vel
        obs.append(torch.cat([pos, vel], -1))
        acts.append(a)
        rews.append(-pos.norm(dim=-1))
    return torch.stack(obs, 1), torch.stack(acts, 1), torch.stack(rews, 1)


if __name__ == "__main__":
    torch.manual_seed(19)
    g = torch.Generator().manual_seed(19)
    agent = Agent(WorldModel(cfg["obs_dim"], cfg["act_dim"], cfg["latent"]),
                  Actor(cfg["latent"], cfg["act_dim"]), cfg)
    for update in range(cfg["updates"]):
        obs, act, rew = collect(cfg["batch"], cfg["seq"], g)
        logs = agent.train_batch(obs, act, rew)
        if update % 5 == 0:
            print(f"update {update} model {logs['model']:.4f} actor {logs['actor']:.4f}")
    param_sum = sum(p.sum().item() for m in (agent.wm, agent.actor) for p in m.parameters())
    print(f"model {logs['model']:.4f} actor {logs['actor']:.4f} param_sum {param_sum:.4f}")
