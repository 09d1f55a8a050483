import torch

from wgangp import build_critic, build_generator, train

cfg = {"nz": 4, "dim": 2, "batch": 32, "iters": 12, "n_critic": 3, "lambda_gp": 10.0, "lr": 1e-3, "log_every": 4}


def sampler(n):
    return torch.randn(n, 2) @ torch.tensor([[1.0, 0.6], [0.0, 0.4]]) + 0.5


if __name__ == "__main__":
    torch.manual_seed(16)
    G, C = build_generator(cfg["nz"], cfg["dim"]), build_critic(cfg["dim"])
    c_loss, g_loss = train(G, C, sampler, cfg)
    param_sum = sum(p.sum().item() for m in (G, C) for p in m.parameters())
    print(f"critic {c_loss:.4f} gen {g_loss:.4f} param_sum {param_sum:.4f}")
