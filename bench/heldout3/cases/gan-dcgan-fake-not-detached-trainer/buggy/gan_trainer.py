import torch
import torch.nn as nn


class GANTrainer:
    def __init__(self, netG, netD, nz, lr=2e-3, beta1=0.5):
        self.netG, self.netD, self.nz = netG, netD, nz
        self.criterion = nn.BCEWithLogitsLoss()
        self.optD = torch.optim.Adam(netD.parameters(), lr=lr, betas=(beta1, 0.999))
        self.optG = torch.optim.Adam(netG.parameters(), lr=lr, betas=(beta1, 0.999))
        self.log = []

    def train_step(self, real):
        b = real.size(0)
        real_label = torch.full((b,), 1.0)
        fake_label = torch.full((b,), 0.0)

        # (1) update D: maximize log(D(x)) + log(1 - D(G(z)))
        self.netD.zero_grad()
        errD_real = self.criterion(self.netD(real), real_label)
        noise = torch.randn(b, self.nz)
        fake = self.netG(noise)
        errD_fake = self.criterion(self.netD(fake), fake_label)
        errD = errD_real + errD_fake
        errD.backward()
        self.optD.step()

        # (2) update G: maximize log(D(G(z)))
        self.netG.zero_grad()
        errG = self.criterion(self.netD(fake), real_label)
        errG.backward()
        self.optG.step()
        self.log.append((errD.item(), errG.item()))
        return errD.item(), errG.item()
