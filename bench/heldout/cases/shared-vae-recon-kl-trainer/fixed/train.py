"""Variational autoencoder on synthetic data, trained by a VAETrainer class."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class VAE(nn.Module):
    def __init__(self, in_dim=20, hidden=32, latent=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU())
        self.fc_mu = nn.Linear(hidden, latent)
        self.fc_logvar = nn.Linear(hidden, latent)
        self.dec = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, in_dim))

    def encode(self, x):
        h = self.enc(x)
        return self.fc_mu(h), self.fc_logvar(h)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        return mu + torch.randn_like(std) * std

    def forward(self, x):
        mu, logvar = self.encode(x)
        z = self.reparameterize(mu, logvar)
        return self.dec(z), mu, logvar


class VAETrainer:
    def __init__(self, model, lr=1e-3, beta=1.0):
        self.model = model
        self.beta = beta
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def train_step(self, x):
        self.optimizer.zero_grad()
        recon, mu, logvar = self.model(x)
        recon_loss = F.mse_loss(recon, x, reduction="sum") / x.size(0)
        kl_loss = self.beta * (-0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / x.size(0))
        (recon_loss + kl_loss).backward()
        self.optimizer.step()
        return recon_loss.item() + kl_loss.item()

    def train(self, data, epochs=2, batch_size=32):
        self.model.train()
        for epoch in range(epochs):
            for x in data.split(batch_size):
                loss = self.train_step(x)
        return loss


if __name__ == "__main__":
    torch.manual_seed(0)
    data = torch.randn(160, 4) @ torch.randn(4, 20)
    trainer = VAETrainer(VAE(), beta=0.5)
    loss = trainer.train(data)
    param_sum = sum(p.sum().item() for p in trainer.model.parameters())
    print(f"final loss {loss:.6f} param_sum {param_sum:.6f}")
