import argparse
import math

import torch

from gan_trainer import GANTrainer
from nets import Discriminator, Generator, weights_init


def ring_batch(n, modes=6, radius=2.0, std=0.05):
    k = torch.randint(modes, (n,))
    ang = k.float() * (2 * math.pi / modes)
    centers = torch.stack([radius * torch.cos(ang), radius * torch.sin(ang)], 1)
    return centers + std * torch.randn(n, 2)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--nz", type=int, default=8)
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--print-every", type=int, default=10)
    opt = parser.parse_args()
    torch.manual_seed(999)

    netG, netD = Generator(opt.nz), Discriminator()
    netG.apply(weights_init)
    netD.apply(weights_init)
    trainer = GANTrainer(netG, netD, opt.nz)
    for it in range(opt.iters):
        errD, errG = trainer.train_step(ring_batch(opt.batch))
        if it % opt.print_every == 0:
            print(f"[{it}/{opt.iters}] Loss_D {errD:.4f} Loss_G {errG:.4f}")

    netG.eval()
    with torch.no_grad():
        samples = netG(torch.randn(256, opt.nz))
    radius = samples.norm(dim=1).mean().item()
    param_sum = sum(p.sum().item() for p in list(netG.parameters()) + list(netD.parameters()))
    print(f"Loss_D {errD:.4f} Loss_G {errG:.4f} radius {radius:.4f} param_sum {param_sum:.4f}")
