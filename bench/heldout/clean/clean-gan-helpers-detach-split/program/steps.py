import torch
import torch.nn.functional as F


def train_d(netD, netG, real, opt_d, nz):
    opt_d.zero_grad()
    fake = netG(torch.randn(real.size(0), nz))
    d_real, d_fake = netD(real), netD(fake.detach())
    loss = (F.binary_cross_entropy_with_logits(d_real, torch.ones_like(d_real))
            + F.binary_cross_entropy_with_logits(d_fake, torch.zeros_like(d_fake)))
    loss.backward()
    opt_d.step()
    return fake, loss.item()


def train_g(netD, fake, opt_g):
    opt_g.zero_grad()
    d_fake = netD(fake)
    loss = F.binary_cross_entropy_with_logits(d_fake, torch.ones_like(d_fake))
    loss.backward()
    opt_g.step()
    return loss.item()
