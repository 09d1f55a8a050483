"""DCGAN-style training loop on a toy 2-D mixture of Gaussians (MLP generator/discriminator)."""
import math

import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)

nz, ngf, ndf = 4, 32, 32
batch_size = 32
niter = 30
real_label, fake_label = 1.0, 0.0


def sample_real(n):
    angles = torch.randint(0, 8, (n,)).float() * (2 * math.pi / 8)
    centers = torch.stack([torch.cos(angles), torch.sin(angles)], dim=1) * 2.0
    return centers + 0.05 * torch.randn(n, 2)


netG = nn.Sequential(
    nn.Linear(nz, ngf), nn.ReLU(True),
    nn.Linear(ngf, ngf), nn.ReLU(True),
    nn.Linear(ngf, 2),
)
netD = nn.Sequential(
    nn.Linear(2, ndf), nn.LeakyReLU(0.2, inplace=True),
    nn.Linear(ndf, ndf), nn.LeakyReLU(0.2, inplace=True),
    nn.Linear(ndf, 1), nn.Sigmoid(),
)

criterion = nn.BCELoss()
optimizerD = optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))

for i in range(niter):
    ############################
    # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
    ###########################
    netD.zero_grad()
    real = sample_real(batch_size)
    label = torch.full((batch_size,), real_label)
    output = netD(real).view(-1)
    errD_real = criterion(output, label)
    errD_real.backward()
    D_x = output.mean().item()

    noise = torch.randn(batch_size, nz)
    fake = netG(noise)
    label.fill_(fake_label)
    output = netD(fake).view(-1)
    errD_fake = criterion(output, label)
    errD_fake.backward()
    D_G_z1 = output.mean().item()
    errD = errD_real + errD_fake
    optimizerD.step()

    ############################
    # (2) Update G network: maximize log(D(G(z)))
    ###########################
    netG.zero_grad()
    label.fill_(real_label)  # fake labels are real for generator cost
    output = netD(fake).view(-1)
    errG = criterion(output, label)
    errG.backward()
    D_G_z2 = output.mean().item()
    optimizerG.step()

param_sum = sum(p.sum().item() for p in netG.parameters())
print(f"final loss_D {errD.item():.6f} loss_G {errG.item():.6f} param_sum {param_sum:.6f}")
