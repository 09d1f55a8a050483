import torch

from trainer import RecurrentPolicy, Trainer

args = {
    "obs_dim": 5,
    "n_actions": 3,
    "episode_len": 24,
    "n_envs": 4,
    "episodes": 6,
    "bptt": 4,
    "detach_gap": 6,
    "lr": 1e-3,
    "grad_clip": 0.5,
}


def expert_rollout(n_envs, T, obs_dim):
    obs = torch.randn(T, n_envs, obs_dim)
    running = obs.cumsum(0)[..., 0]
    actions = torch.bucketize(running, torch.tensor([-1.0, 1.0]))
    return obs, actions


def main():
    torch.manual_seed(0)
    model = RecurrentPolicy(args["obs_dim"], args["n_actions"])
    trainer = Trainer(model, args)
    for ep in range(args["episodes"]):
        obs, acts = expert_rollout(args["n_envs"], args["episode_len"], args["obs_dim"])
        trainer.run_episode(obs, acts)
        if ep % 2 == 0:
            print(f"episode {ep} loss {trainer.stats['loss'][-1]:.4f} acc {trainer.stats['acc'][-1]:.3f}")
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {trainer.stats['loss'][-1]:.4f} acc {trainer.stats['acc'][-1]:.3f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
