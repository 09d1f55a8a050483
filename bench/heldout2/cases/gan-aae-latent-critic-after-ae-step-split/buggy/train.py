"""Adversarial autoencoder: a reconstruction phase, then a regularisation phase on the latent codes."""
import torch
import torch.nn.functional as F

from models import Decoder, Encoder, LatentCritic

BATCH = 32


def make_data(n):
    centers = torch.randn(4, 10) * 2
    labels = torch.randint(0, 4, (n,))
    return centers[labels] + 0.3 * torch.randn(n, 10)


def train_epoch(enc, dec, critic, data, opt_ae, opt_critic):
    perm = torch.randperm(data.size(0))
    for i in range(0, data.size(0), BATCH):
        x = data[perm[i:i + BATCH]]
        ones, zeros = torch.ones(x.size(0)), torch.zeros(x.size(0))

        # reconstruction phase (the encoder is also pushed to fool the critic)
        z = enc(x)
        recon = dec(z)
        ae_loss = F.mse_loss(recon, x) + 0.1 * F.binary_cross_entropy_with_logits(critic(z), ones)
        opt_ae.zero_grad()
        ae_loss.backward()
        opt_ae.step()

        # regularisation phase: the critic learns prior codes vs encoded codes
        prior = torch.randn_like(z)
        critic_loss = (F.binary_cross_entropy_with_logits(critic(prior), ones)
                       + F.binary_cross_entropy_with_logits(critic(z), zeros))
        opt_critic.zero_grad()
        critic_loss.backward()
        opt_critic.step()
    return ae_loss.item(), critic_loss.item()


def main():
    torch.manual_seed(8)
    data = make_data(384)
    enc, dec, critic = Encoder(), Decoder(), LatentCritic()
    opt_ae = torch.optim.Adam(list(enc.parameters()) + list(dec.parameters()), lr=2e-3)
    opt_critic = torch.optim.Adam(critic.parameters(), lr=1e-3)
    for epoch in range(4):
        ae_loss, critic_loss = train_epoch(enc, dec, critic, data, opt_ae, opt_critic)
        print(f"epoch {epoch} ae {ae_loss:.4f} critic {critic_loss:.4f}")
    with torch.no_grad():
        codes = enc(data)
    param_sum = sum(p.sum().item() for m in (enc, dec, critic) for p in m.parameters())
    print(f"final ae {ae_loss:.4f} critic {critic_loss:.4f} code_std {codes.std().item():.4f} "
          f"param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
