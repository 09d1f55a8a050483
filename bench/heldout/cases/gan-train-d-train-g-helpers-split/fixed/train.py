"""Vanilla GAN on 16-dimensional synthetic vectors, with the two updates in helper functions."""
import torch

from models import Discriminator, Generator
from steps import train_d, train_g

NZ = 8
BATCH = 32
ITERS = 25


def real_batches(n_batches, batch_size, dim=16):
    basis = torch.randn(3, dim)
    for _ in range(n_batches):
        coeffs = torch.randn(batch_size, 3)
        yield torch.tanh(coeffs @ basis)


def main():
    torch.manual_seed(0)
    netG = Generator(nz=NZ)
    netD = Discriminator()
    opt_g = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))

    history = {"d": [], "g": []}
    for it, real in enumerate(real_batches(ITERS, BATCH)):
        fake, d_loss = train_d(netD, netG, real, opt_d, NZ)
        g_loss = train_g(netD, fake, opt_g)
        history["d"].append(d_loss)
        history["g"].append(g_loss)

    d_acc = discriminator_accuracy(netD, netG, next(real_batches(1, 64)))
    param_sum = sum(p.sum().item() for p in netG.parameters())
    print(f"final loss_D {history['d'][-1]:.6f} loss_G {history['g'][-1]:.6f} "
          f"d_acc {d_acc:.4f} param_sum {param_sum:.6f}")


@torch.no_grad()
def discriminator_accuracy(netD, netG, real):
    netG.eval()
    fake = netG(torch.randn(real.size(0), NZ))
    netG.train()
    correct = (netD(real) > 0).float().sum() + (netD(fake) < 0).float().sum()
    return (correct / (2 * real.size(0))).item()


if __name__ == "__main__":
    main()
