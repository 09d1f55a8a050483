"""GAN with several generator updates per discriminator update (n > m)."""
import torch
import torch.nn as nn

LATENT = 10
DIM = 24


def build_models():
    netG = nn.Sequential(nn.Linear(LATENT, 48), nn.ReLU(), nn.Linear(48, 48), nn.ReLU(),
                         nn.Linear(48, DIM), nn.Sigmoid())
    netD = nn.Sequential(nn.Linear(DIM, 48), nn.LeakyReLU(0.2), nn.Linear(48, 1), nn.Sigmoid())
    return netG, netD


def train_epoch(netG, netD, optG, optD, data_stream, g_update_factor=2):
    bce_loss = nn.BCELoss()
    for batch_id, real_batch in enumerate(data_stream):
        bsz = real_batch.shape[0]
        # generator updates (n times)
        for _ in range(g_update_factor):
            z = torch.randn(bsz, LATENT)
            fake_batch = netG(z)
            gen_scores = netD(fake_batch).view(-1)
            g_loss = bce_loss(gen_scores, torch.ones_like(gen_scores))
            g_loss.backward()
            optG.step()
            netG.zero_grad()
        # discriminator update (once)
        real_scores = netD(real_batch).view(-1)
        fake_scores = netD(fake_batch.detach()).view(-1)
        d_loss = (bce_loss(real_scores, torch.ones_like(real_scores))
                  + bce_loss(fake_scores, torch.zeros_like(fake_scores)))
        d_loss.backward()
        optD.step()
        netD.zero_grad()
    return d_loss.item(), g_loss.item()


def main():
    torch.manual_seed(0)
    netG, netD = build_models()
    optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real = (torch.rand(160, DIM) > 0.7).float()
    for epoch in range(2):
        d_loss, g_loss = train_epoch(netG, netD, optG, optD, real.split(32))
    param_sum = sum(p.sum().item() for p in netG.parameters())
    print(f"final loss_D {d_loss:.6f} loss_G {g_loss:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
