"""Single-scale SinGAN-style training: alternate Dsteps critic updates and Gsteps generator updates."""
import torch
import torch.nn as nn


def make_generator(dim, hidden=32):
    return nn.Sequential(nn.Linear(dim, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, hidden),
                         nn.LeakyReLU(0.2), nn.Linear(hidden, dim), nn.Tanh())


def make_critic(dim, hidden=32):
    return nn.Sequential(nn.Linear(dim, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 1))


def train_single_scale(netD, netG, real, niter=6, Dsteps=3, Gsteps=3, alpha=10.0):
    optimizerD = torch.optim.Adam(netD.parameters(), lr=5e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=5e-4, betas=(0.5, 0.999))
    z_opt = torch.randn_like(real)
    for it in range(niter):
        # (1) update D network
        for j in range(Dsteps):
            netD.zero_grad()
            errD_real = -netD(real).mean()
            errD_real.backward(retain_graph=True)
            noise = torch.randn_like(real)
            fake = netG(noise)
            errD_fake = netD(fake.detach()).mean()
            errD_fake.backward(retain_graph=True)
            optimizerD.step()
        # (2) update G network
        for j in range(Gsteps):
            netG.zero_grad()
            fake = netG(noise)
            output = netD(fake)
            errG = -output.mean()
            errG.backward(retain_graph=True)
            rec_loss = alpha * nn.functional.mse_loss(netG(z_opt), real)
            rec_loss.backward(retain_graph=True)
            optimizerG.step()
    return errD_real.item() + errD_fake.item(), errG.item(), rec_loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    real = torch.tanh(torch.randn(1, 24))
    netG, netD = make_generator(24), make_critic(24)
    errD, errG, rec = train_single_scale(netD, netG, real)
    param_sum = sum(p.sum().item() for p in netG.parameters())
    print(f"final errD {errD:.6f} errG {errG:.6f} rec {rec:.6f} param_sum {param_sum:.6f}")
