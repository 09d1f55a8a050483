"""GAN that skips discriminator updates while the discriminator is too accurate."""
import torch
import torch.nn.functional as F

from data import gaussian_mixture
from nets import D, G

NZ, DIM = 6, 4
D_ACC_MAX = 0.8


def train(netG, netD, data, epochs=2, batch_size=32):
    opt_g = torch.optim.Adam(netG.parameters(), lr=1e-3, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(netD.parameters(), lr=1e-3, betas=(0.5, 0.999))
    d_updates = 0
    for epoch in range(epochs):
        for real in data.split(batch_size):
            fake = netG(torch.randn(real.size(0), NZ))
            d_real = netD(real)
            d_fake = netD(fake)
            d_acc = 0.5 * ((d_real > 0).float().mean() + (d_fake < 0).float().mean()).item()
            d_loss = (F.binary_cross_entropy_with_logits(d_real, torch.ones_like(d_real))
                      + F.binary_cross_entropy_with_logits(d_fake, torch.zeros_like(d_fake)))
            if d_acc < D_ACC_MAX:
                opt_d.zero_grad()
                d_loss.backward()
                opt_d.step()
                d_updates += 1
            g_out = netD(fake)
            g_loss = F.binary_cross_entropy_with_logits(g_out, torch.ones_like(g_out))
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()
    return d_loss.item(), g_loss.item(), d_updates


def main():
    torch.manual_seed(0)
    netG, netD = G(NZ, DIM), D(DIM)
    data = gaussian_mixture(192, DIM)
    d_loss, g_loss, d_updates = train(netG, netD, data)
    param_sum = sum(p.sum().item() for p in netG.parameters())
    print(f"final loss_D {d_loss:.6f} loss_G {g_loss:.6f} d_updates {d_updates} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
