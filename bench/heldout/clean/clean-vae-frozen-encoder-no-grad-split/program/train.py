"""Train a new decoder for a pre-trained (frozen) encoder."""
import torch
import torch.nn.functional as F

from vae import Decoder, Encoder, freeze

torch.manual_seed(0)

encoder = freeze(Encoder())
decoder = Decoder()
optimizer = torch.optim.Adam(decoder.parameters(), lr=2e-3)

data = torch.randn(192, 4) @ torch.randn(4, 16)

with torch.no_grad():
    mu_all, logvar_all = encoder(data)


def kl_to_prior(mu, logvar):
    return (-0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(1)).mean().item()


prior_kl = kl_to_prior(mu_all, logvar_all)
for epoch in range(3):
    perm = torch.randperm(len(data))
    for start in range(0, len(data), 32):
        idx = perm[start:start + 32]
        mu, logvar = mu_all[idx], logvar_all[idx]
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        recon = decoder(z)
        loss = F.mse_loss(recon, data[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

with torch.no_grad():
    full = F.mse_loss(decoder(mu_all), data).item()

param_sum = sum(p.sum().item() for p in decoder.parameters())
print(f"final loss {loss.item():.6f} full {full:.6f} kl {prior_kl:.6f} param_sum {param_sum:.6f}")
