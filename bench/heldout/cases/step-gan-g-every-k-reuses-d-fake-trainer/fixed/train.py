"""Non-saturating GAN where the generator is updated every g_every discriminator steps."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GANTrainer:
    def __init__(self, nz=8, dim=12, g_every=2, lr=2e-4):
        self.nz = nz
        self.g_every = g_every
        self.G = nn.Sequential(nn.Linear(nz, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, dim))
        self.D = nn.Sequential(nn.Linear(dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32), nn.LeakyReLU(0.2),
                               nn.Linear(32, 1))
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=lr, betas=(0.0, 0.99))
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=lr, betas=(0.0, 0.99))
        self.g_loss = float("nan")

    def train_step(self, real, it):
        z = torch.randn(real.size(0), self.nz)
        fake = self.G(z)
        d_fake = self.D(fake)
        d_real = self.D(real)
        d_loss = F.softplus(d_fake).mean() + F.softplus(-d_real).mean()
        self.opt_d.zero_grad()
        d_loss.backward(retain_graph=True)
        self.opt_d.step()

        if it % self.g_every == 0:
            d_fake = self.D(fake)
            g_loss = F.softplus(-d_fake).mean()
            self.opt_g.zero_grad()
            g_loss.backward()
            self.opt_g.step()
            self.g_loss = g_loss.item()
        return d_loss.item(), self.g_loss

    def fit(self, data, batch_size=32, epochs=2):
        it = 0
        for epoch in range(epochs):
            for real in data.split(batch_size):
                it += 1
                d_loss, g_loss = self.train_step(real, it)
        return d_loss, g_loss


if __name__ == "__main__":
    torch.manual_seed(0)
    data = torch.randn(192, 3) @ torch.randn(3, 12)
    trainer = GANTrainer()
    d_loss, g_loss = trainer.fit(data)
    param_sum = sum(p.sum().item() for p in trainer.G.parameters())
    print(f"final loss_D {d_loss:.6f} loss_G {g_loss:.6f} param_sum {param_sum:.6f}")
