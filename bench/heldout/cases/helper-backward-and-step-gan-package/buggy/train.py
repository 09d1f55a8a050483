"""GAN on a 2-D ring, with the update boilerplate factored into gantools.train_utils."""
import math

import torch
import torch.nn as nn

from gantools.nets import discriminator, generator
from gantools.train_utils import backward_and_step

torch.manual_seed(0)

NZ, DIM, BATCH, STEPS = 4, 2, 64, 25


def sample_ring(n, radius=2.0):
    theta = torch.rand(n) * 2 * math.pi
    return torch.stack([radius * torch.cos(theta), radius * torch.sin(theta)], 1) + 0.05 * torch.randn(n, 2)


netG, netD = generator(NZ, DIM), discriminator(DIM)
opt_g = torch.optim.Adam(netG.parameters(), lr=1e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(netD.parameters(), lr=1e-3, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()
ones, zeros = torch.ones(BATCH, 1), torch.zeros(BATCH, 1)



def mean_radius(netG, n=256):
    with torch.no_grad():
        return netG(torch.randn(n, NZ)).norm(dim=1).mean().item()


for step in range(STEPS):
    real = sample_ring(BATCH)
    fake = netG(torch.randn(BATCH, NZ))

    d_loss = bce(netD(real), ones) + bce(netD(fake), zeros)
    d_val = backward_and_step(d_loss, opt_d, netD.parameters(), max_norm=5.0)

    g_loss = bce(netD(fake), ones)
    g_val = backward_and_step(g_loss, opt_g, netG.parameters(), max_norm=5.0)

radius = mean_radius(netG)
param_sum = sum(p.sum().item() for p in netG.parameters())
print(f"final loss_D {d_val:.6f} loss_G {g_val:.6f} radius {radius:.6f} param_sum {param_sum:.6f}")
