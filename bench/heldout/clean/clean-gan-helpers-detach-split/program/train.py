"""Vanilla GAN on tanh-squashed low-rank data with the updates factored into steps.py."""
import torch

from models import make_d, make_g
from steps import train_d, train_g

NZ, DIM, BATCH = 6, 12, 32


def data_batches(n_batches):
    basis = torch.randn(3, DIM)
    for _ in range(n_batches):
        yield torch.tanh(torch.randn(BATCH, 3) @ basis)


@torch.no_grad()
def sample_stats(netG, n=128):
    samples = netG(torch.randn(n, NZ))
    return samples.mean().item(), samples.std().item()


def main():
    torch.manual_seed(0)
    netG, netD = make_g(NZ, DIM), make_d(DIM)
    opt_g = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    d_hist, g_hist = [], []
    for real in data_batches(25):
        fake, d_loss = train_d(netD, netG, real, opt_d, NZ)
        g_loss = train_g(netD, fake, opt_g)
        d_hist.append(d_loss)
        g_hist.append(g_loss)
    mean, std = sample_stats(netG)
    param_sum = sum(p.sum().item() for p in netG.parameters())
    print(f"final loss_D {d_hist[-1]:.6f} loss_G {g_hist[-1]:.6f} mean {mean:.6f} std {std:.6f} "
          f"param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
