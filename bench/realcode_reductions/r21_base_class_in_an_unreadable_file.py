"""A model class whose base class sits in a file the analysis cannot read (there: Python 2's
`.cuda(async=True)`, a syntax error since 3.7), and which reads attributes that base sets.

Model believed: `self.input_B`, set by nothing it saw in a class with a `forward`, is a parameter
registered elsewhere, so the two discriminator losses "share a graph through `self.real_B`"
(GG002). A class with a base the analysis does not see gets its other attributes from that base.
Reduced from junyanz/BicycleGAN (models/base_model.py, models/bicycle_gan_model.py).
"""
import torch
from torch.autograd import Variable

from realcode_helpers_unreadable_base import BaseModel


class TwoDiscriminatorModel(BaseModel):
    def forward(self):
        half = self.opt.batchSize // 2
        self.real_A = Variable(self.input_A)
        self.real_B = Variable(self.input_B)
        self.real_B_encoded = self.real_B[0:half]
        self.real_B_random = self.real_B[half:]
        self.fake_B_encoded = self.netG(self.real_A[0:half])
        self.fake_B_random = self.netG(self.real_A[half:])

    def backward_D(self, netD, real, fake):
        pred_fake = netD(fake.detach())
        pred_real = netD(real)
        loss_D = ((pred_fake - 0.0) ** 2).mean() + ((pred_real - 1.0) ** 2).mean()
        loss_D.backward()
        return loss_D

    def update_D(self, data):
        self.set_input(data)
        self.forward()
        self.optimizer_D.zero_grad()
        self.loss_D = self.backward_D(self.netD, self.real_B_encoded, self.fake_B_encoded)
        self.loss_D2 = self.backward_D(self.netD, self.real_B_random, self.fake_B_random)
        self.optimizer_D.step()


def train(model, loader, epochs):
    for epoch in range(epochs):
        for data in loader:
            model.update_D(data)
