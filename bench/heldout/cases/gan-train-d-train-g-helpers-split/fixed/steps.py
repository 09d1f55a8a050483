import torch
import torch.nn.functional as F


def train_d(netD, netG, real, opt_d, nz):
    """One discriminator update; returns the generated batch so that G can reuse it."""
    opt_d.zero_grad()
    z = torch.randn(real.size(0), nz)
    fake = netG(z)
    d_real = netD(real)
    d_fake = netD(fake.detach())
    d_loss = (F.binary_cross_entropy_with_logits(d_real, torch.ones_like(d_real))
              + F.binary_cross_entropy_with_logits(d_fake, torch.zeros_like(d_fake)))
    d_loss.backward()
    opt_d.step()
    return fake, d_loss.item()


def train_g(netD, fake, opt_g):
    """One generator update on the batch generated for the discriminator step."""
    opt_g.zero_grad()
    d_fake = netD(fake)
    g_loss = F.binary_cross_entropy_with_logits(d_fake, torch.ones_like(d_fake))
    g_loss.backward()
    opt_g.step()
    return g_loss.item()
