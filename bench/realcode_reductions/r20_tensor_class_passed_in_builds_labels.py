"""A GAN loss given the tensor class to build its labels with (`tensor=torch.cuda.FloatTensor`),
caching the label tensor between calls.

Model believed: `self.Tensor(input.size())` is a call of a module (an attribute only ever called),
so the cached label carried a graph of its own that the first backward freed (GG003 on
`target_tensor`). `input.size()` is a shape, not a tensor; an object only ever called and given
only numbers is a factory. Reduced from junyanz/BicycleGAN models/networks.py (GANLoss), the same
class as in pytorch-CycleGAN-and-pix2pix of that time.
"""
import torch
import torch.nn as nn
from torch.autograd import Variable


class GANLoss(nn.Module):
    def __init__(self, mse_loss=True, target_real_label=1.0, target_fake_label=0.0,
                 tensor=torch.FloatTensor):
        super(GANLoss, self).__init__()
        self.real_label = target_real_label
        self.fake_label = target_fake_label
        self.real_label_var = None
        self.fake_label_var = None
        self.Tensor = tensor
        self.loss = nn.MSELoss() if mse_loss else nn.BCELoss()

    def get_target_tensor(self, input, target_is_real):
        if target_is_real:
            create_label = ((self.real_label_var is None) or
                            (self.real_label_var.numel() != input.numel()))
            if create_label:
                real_tensor = self.Tensor(input.size()).fill_(self.real_label)
                self.real_label_var = Variable(real_tensor, requires_grad=False)
            target_tensor = self.real_label_var
        else:
            create_label = ((self.fake_label_var is None) or
                            (self.fake_label_var.numel() != input.numel()))
            if create_label:
                fake_tensor = self.Tensor(input.size()).fill_(self.fake_label)
                self.fake_label_var = Variable(fake_tensor, requires_grad=False)
            target_tensor = self.fake_label_var
        return target_tensor

    def __call__(self, input, target_is_real):
        target_tensor = self.get_target_tensor(input, target_is_real)
        return self.loss(input, target_tensor)


def train(netG, netD, loader, optimizer_G, optimizer_D, gpu_ids):
    criterion = GANLoss(tensor=torch.cuda.FloatTensor if gpu_ids else torch.Tensor)
    for real_A, real_B in loader:
        fake_B = netG(real_A)
        optimizer_D.zero_grad()
        loss_D = (criterion(netD(fake_B.detach()), False) + criterion(netD(real_B), True)) * 0.5
        loss_D.backward()
        optimizer_D.step()
        optimizer_G.zero_grad()
        loss_G = criterion(netD(fake_B), True)
        loss_G.backward()
        optimizer_G.step()
