"""Standard GAN training step order (D on detached fakes, then G)."""
import torch
import torch.nn as nn

torch.manual_seed(0)

NZ, DIM, BATCH, ITERS = 4, 8, 32, 25

netG = nn.Sequential(nn.Linear(NZ, 32), nn.ReLU(True), nn.Linear(32, 32), nn.ReLU(True), nn.Linear(32, DIM))
netD = nn.Sequential(nn.Linear(DIM, 32), nn.LeakyReLU(0.2, inplace=True), nn.Linear(32, 1), nn.Sigmoid())
criterion = nn.BCELoss()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
basis = torch.randn(2, DIM)

for i in range(ITERS):
    real = torch.randn(BATCH, 2) @ basis
    # (1) Update D
    netD.zero_grad()
    label = torch.full((BATCH,), 1.0)
    output = netD(real).view(-1)
    errD_real = criterion(output, label)
    errD_real.backward()
    noise = torch.randn(BATCH, NZ)
    fake = netG(noise)
    label.fill_(0.0)
    output = netD(fake.detach()).view(-1)
    errD_fake = criterion(output, label)
    errD_fake.backward()
    errD = errD_real + errD_fake
    optimizerD.step()
    # (2) Update G
    netG.zero_grad()
    label.fill_(1.0)
    output = netD(fake).view(-1)
    errG = criterion(output, label)
    errG.backward()
    optimizerG.step()

param_sum = sum(p.sum().item() for p in netG.parameters())
print(f"final loss_D {errD.item():.6f} loss_G {errG.item():.6f} param_sum {param_sum:.6f}")
