"""WGAN with gradient penalty."""
import torch
import torch.nn as nn


def compute_gradient_penalty(D, real_samples, fake_samples):
    alpha = torch.rand(real_samples.size(0), 1)
    interpolates = (alpha * real_samples + (1 - alpha) * fake_samples).requires_grad_(True)
    d_interpolates = D(interpolates)
    gradients = torch.autograd.grad(
        outputs=d_interpolates,
        inputs=interpolates,
        grad_outputs=torch.ones_like(d_interpolates),
        create_graph=True,
        retain_graph=True,
        only_inputs=True,
    )[0]
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean()


def train(generator, critic, data, latent_dim, n_critic=3, lambda_gp=10.0):
    opt_g = torch.optim.Adam(generator.parameters(), lr=1e-4, betas=(0.5, 0.9))
    opt_d = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.5, 0.9))
    for i, real in enumerate(data.split(32)):
        opt_d.zero_grad()
        z = torch.randn(real.size(0), latent_dim)
        fake = generator(z).detach()
        gp = compute_gradient_penalty(critic, real, fake)
        d_loss = -critic(real).mean() + critic(fake).mean() + lambda_gp * gp
        d_loss.backward()
        opt_d.step()
        if i % n_critic == 0:
            opt_g.zero_grad()
            g_loss = -critic(generator(z)).mean()
            g_loss.backward()
            opt_g.step()
    return d_loss.item(), g_loss.item()


def main():
    torch.manual_seed(0)
    latent_dim, dim = 6, 10
    generator = nn.Sequential(nn.Linear(latent_dim, 32), nn.ReLU(), nn.Linear(32, dim))
    critic = nn.Sequential(nn.Linear(dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    data = torch.randn(320, 2) @ torch.randn(2, dim)
    d_loss, g_loss = train(generator, critic, data, latent_dim)
    param_sum = sum(p.sum().item() for p in generator.parameters())
    print(f"final loss_D {d_loss:.6f} loss_G {g_loss:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
