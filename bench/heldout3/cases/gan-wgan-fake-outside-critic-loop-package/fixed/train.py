import torch

from wgan import Critic, Generator, fit

cfg = dict(z_dim=4, data_dim=2, batch=32, iterations=15, n_critic=5, clip=0.05, lr=5e-4, log_every=5)


def sample_real(n):
    # two Gaussian blobs
    side = torch.randint(2, (n, 1)).float() * 2 - 1
    return torch.cat([side * 1.5, 0.5 * side], 1) + 0.1 * torch.randn(n, 2)


if __name__ == "__main__":
    torch.manual_seed(11)
    gen, critic = Generator(cfg["z_dim"], cfg["data_dim"]), Critic(cfg["data_dim"])
    hist = fit(gen, critic, sample_real, cfg)
    with torch.no_grad():
        s = gen(torch.randn(200, cfg["z_dim"]))
    param_sum = sum(p.sum().item() for p in list(gen.parameters()) + list(critic.parameters()))
    print(f"critic {hist[-1][0]:.4f} gen {hist[-1][1]:.4f} mean_x {s[:, 0].mean().item():.4f} param_sum {param_sum:.4f}")
