"""Hinge-loss GAN with spectral normalisation left out for speed."""
import torch

from gan import Discriminator, Generator, discriminator_loss, generator_loss
from gan.data import ring_data

torch.manual_seed(0)

NZ = 8
BATCH = 32
STEPS = 20

netG = Generator(nz=NZ)
netD = Discriminator()
opt_g = torch.optim.Adam(netG.parameters(), lr=1e-4, betas=(0.0, 0.9))
opt_d = torch.optim.Adam(netD.parameters(), lr=4e-4, betas=(0.0, 0.9))
data = ring_data(BATCH * STEPS)

log = []
for step in range(STEPS):
    real = data[step * BATCH:(step + 1) * BATCH]
    z = torch.randn(BATCH, NZ)
    fake = netG(z)

    # discriminator
    opt_d.zero_grad()
    d_loss = discriminator_loss(netD, real, fake)
    d_loss.backward()
    opt_d.step()

    # generator
    opt_g.zero_grad()
    g_loss = generator_loss(netD, fake)
    g_loss.backward()
    opt_g.step()

    log.append((d_loss.item(), g_loss.item()))

with torch.no_grad():
    netG.eval()
    sample_norm = netG(torch.randn(64, NZ)).norm(dim=1).mean().item()

param_sum = sum(p.sum().item() for p in netG.parameters())
print(f"final loss_D {log[-1][0]:.6f} loss_G {log[-1][1]:.6f} norm {sample_norm:.6f} param_sum {param_sum:.6f}")
