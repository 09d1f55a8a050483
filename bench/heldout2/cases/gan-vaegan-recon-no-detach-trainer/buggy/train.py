"""VAE-GAN: a VAE whose reconstructions are also judged by a discriminator."""
import torch
import torch.nn.functional as F

from models import VAE, Critic

BATCH = 32
ADV_WEIGHT = 0.05


def make_data(n, x_dim=12):
    z = torch.randn(n, 3)
    mix = torch.randn(3, x_dim)
    return torch.tanh(z @ mix) + 0.05 * torch.randn(n, x_dim)


class VAEGANTrainer:
    def __init__(self, vae, critic):
        self.vae, self.critic = vae, critic
        self.opt_vae = torch.optim.Adam(vae.parameters(), lr=2e-3)
        self.opt_d = torch.optim.Adam(critic.parameters(), lr=1e-3)

    def step(self, x):
        recon, mu, logvar = self.vae(x)
        ones, zeros = torch.ones(x.size(0)), torch.zeros(x.size(0))

        # discriminator: real data vs reconstructions
        d_loss = (F.binary_cross_entropy_with_logits(self.critic(x), ones)
                  + F.binary_cross_entropy_with_logits(self.critic(recon), zeros))
        self.opt_d.zero_grad()
        d_loss.backward()
        self.opt_d.step()

        # VAE: reconstruction + KL + fool the discriminator
        kl = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
        adv = F.binary_cross_entropy_with_logits(self.critic(recon), ones)
        vae_loss = F.mse_loss(recon, x) + 0.1 * kl + ADV_WEIGHT * adv
        self.opt_vae.zero_grad()
        vae_loss.backward()
        self.opt_vae.step()
        return d_loss.item(), vae_loss.item()


def main():
    torch.manual_seed(4)
    data = make_data(512)
    trainer = VAEGANTrainer(VAE(), Critic())
    for epoch in range(4):
        perm = torch.randperm(data.size(0))
        for i in range(0, data.size(0), BATCH):
            d_loss, vae_loss = trainer.step(data[perm[i:i + BATCH]])
        print(f"epoch {epoch} d {d_loss:.4f} vae {vae_loss:.4f}")
    params = list(trainer.vae.parameters()) + list(trainer.critic.parameters())
    param_sum = sum(p.sum().item() for p in params)
    print(f"final loss_D {d_loss:.4f} loss_VAE {vae_loss:.4f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
