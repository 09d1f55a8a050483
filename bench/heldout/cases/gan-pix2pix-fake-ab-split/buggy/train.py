"""pix2pix-style paired translation A -> B with an L1 term and a conditional discriminator."""
import torch
import torch.nn as nn

from networks import GANLoss, PatchD, TinyUNet, set_requires_grad

torch.manual_seed(0)

DIM_A, DIM_B = 12, 12
LAMBDA_L1 = 100.0
BATCH = 16

mix = torch.randn(DIM_A, DIM_B)
real_A_all = torch.randn(160, DIM_A)
real_B_all = torch.tanh(real_A_all @ mix * 0.3)

netG = TinyUNet(DIM_A, DIM_B)
netD = PatchD(DIM_A + DIM_B)
criterionGAN = GANLoss()
criterionL1 = nn.L1Loss()
optimizer_G = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizer_D = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))

for epoch in range(2):
    for real_A, real_B in zip(real_A_all.split(BATCH), real_B_all.split(BATCH)):
        fake_B = netG(real_A)

        # update D
        set_requires_grad(netD, True)
        optimizer_D.zero_grad()
        fake_AB = torch.cat((real_A, fake_B), 1)
        pred_fake = netD(fake_AB)
        loss_D_fake = criterionGAN(pred_fake, False)
        real_AB = torch.cat((real_A, real_B), 1)
        pred_real = netD(real_AB)
        loss_D_real = criterionGAN(pred_real, True)
        loss_D = (loss_D_fake + loss_D_real) * 0.5
        loss_D.backward()
        optimizer_D.step()

        # update G
        set_requires_grad(netD, False)
        optimizer_G.zero_grad()
        pred_fake = netD(fake_AB)
        loss_G_GAN = criterionGAN(pred_fake, True)
        loss_G_L1 = criterionL1(fake_B, real_B) * LAMBDA_L1
        loss_G = loss_G_GAN + loss_G_L1
        loss_G.backward()
        optimizer_G.step()

param_sum = sum(p.sum().item() for p in netG.parameters())
print(f"final loss_D {loss_D.item():.6f} loss_G {loss_G.item():.6f} param_sum {param_sum:.6f}")
