import itertools

import torch
import torch.nn as nn

from .image_pool import ImagePool
from .networks import define_D, define_G


class CycleGANModel:
    def __init__(self, dim, lambda_cycle=10.0, pool_size=8, lr=2e-4):
        self.netG_A, self.netG_B = define_G(dim), define_G(dim)
        self.netD_A, self.netD_B = define_D(dim), define_D(dim)
        self.fake_A_pool, self.fake_B_pool = ImagePool(pool_size), ImagePool(pool_size)
        self.criterionGAN = nn.MSELoss()
        self.criterionCycle = nn.L1Loss()
        self.lambda_cycle = lambda_cycle
        self.optimizer_G = torch.optim.Adam(
            itertools.chain(self.netG_A.parameters(), self.netG_B.parameters()), lr=lr, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(
            itertools.chain(self.netD_A.parameters(), self.netD_B.parameters()), lr=lr, betas=(0.5, 0.999))

    def set_input(self, real_A, real_B):
        self.real_A, self.real_B = real_A, real_B

    def forward(self):
        self.fake_B = self.netG_A(self.real_A)
        self.rec_A = self.netG_B(self.fake_B)
        self.fake_A = self.netG_B(self.real_B)
        self.rec_B = self.netG_A(self.fake_A)

    def gan_loss(self, pred, is_real):
        return self.criterionGAN(pred, torch.full_like(pred, 1.0 if is_real else 0.0))

    def backward_G(self):
        loss_G_A = self.gan_loss(self.netD_A(self.fake_B), True)
        loss_G_B = self.gan_loss(self.netD_B(self.fake_A), True)
        loss_cycle = self.criterionCycle(self.rec_A, self.real_A) + self.criterionCycle(self.rec_B, self.real_B)
        self.loss_G = loss_G_A + loss_G_B + self.lambda_cycle * loss_cycle
        self.loss_G.backward()

    def backward_D_basic(self, netD, real, fake):
        pred_real = netD(real)
        pred_fake = netD(fake)
        loss_D = (self.gan_loss(pred_real, True) + self.gan_loss(pred_fake, False)) * 0.5
        loss_D.backward()
        return loss_D

    def optimize_parameters(self):
        self.forward()
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()
        self.optimizer_D.zero_grad()
        fake_B = self.fake_B_pool.query(self.fake_B)
        self.loss_D_A = self.backward_D_basic(self.netD_A, self.real_B, fake_B)
        fake_A = self.fake_A_pool.query(self.fake_A)
        self.loss_D_B = self.backward_D_basic(self.netD_B, self.real_A, fake_A)
        self.optimizer_D.step()
