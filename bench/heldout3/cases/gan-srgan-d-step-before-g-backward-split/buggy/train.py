import argparse

import torch
import torch.nn.functional as F

from loss import GeneratorLoss
from model import Discriminator, Generator


def make_pairs(n, length=32):
    t = torch.linspace(0, 1, length)
    freq = torch.rand(n, 1) * 4 + 1
    hr = torch.sin(2 * torch.pi * freq * t).unsqueeze(1) * 0.9
    lr = F.avg_pool1d(hr, 2)
    return lr, hr


parser = argparse.ArgumentParser(description="Train a tiny 1-D SRGAN")
parser.add_argument("--num_epochs", default=3, type=int)
parser.add_argument("--batches", default=6, type=int)
opt = parser.parse_args()

torch.manual_seed(2)
netG, netD = Generator(), Discriminator()
generator_criterion = GeneratorLoss()
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-3)
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-3)
results = {"d_loss": [], "g_loss": [], "mse": []}

for epoch in range(1, opt.num_epochs + 1):
    running = {"d_loss": 0.0, "g_loss": 0.0}
    netG.train()
    netD.train()
    for _ in range(opt.batches):
        data, target = make_pairs(8)
        ############################
        # (1) Update D network: maximize D(x)-1-D(G(z))
        ###########################
        fake_img = netG(data)
        netD.zero_grad()
        real_out = netD(target).mean()
        fake_out = netD(fake_img).mean()
        d_loss = 1 - real_out + fake_out
        d_loss.backward(retain_graph=True)
        optimizerD.step()
        ############################
        # (2) Update G network: minimize 1-D(G(z)) + Perception Loss + Image Loss + TV Loss
        ###########################
        netG.zero_grad()
        g_loss = generator_criterion(fake_out, fake_img, target)
        g_loss.backward()
        optimizerG.step()
        running["d_loss"] += d_loss.item()
        running["g_loss"] += g_loss.item()
    netG.eval()
    with torch.no_grad():
        lr, hr = make_pairs(16)
        mse = F.mse_loss(netG(lr), hr).item()
    results["mse"].append(mse)
    print(f"[{epoch}/{opt.num_epochs}] Loss_D {running['d_loss'] / opt.batches:.4f} "
          f"Loss_G {running['g_loss'] / opt.batches:.4f} val_mse {mse:.4f}")

param_sum = sum(p.sum().item() for p in list(netG.parameters()) + list(netD.parameters()))
print(f"val_mse {results['mse'][-1]:.4f} param_sum {param_sum:.4f}")
