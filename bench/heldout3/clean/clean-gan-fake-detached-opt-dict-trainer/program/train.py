import argparse

import torch

from nets import discriminator, generator
from trainer import HingeGANTrainer

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--nz", type=int, default=4)
    args = ap.parse_args()
    torch.manual_seed(3)
    trainer = HingeGANTrainer(generator(args.nz), discriminator(), args.nz)
    for it in range(args.iters):
        real = torch.randn(32, 2) * torch.tensor([0.5, 0.1]) + torch.tensor([1.0, -1.0])
        d_loss, g_loss = trainer.step(real)
        if it % 10 == 0:
            print(f"it {it} d {d_loss:.4f} g {g_loss:.4f}")
    with torch.no_grad():
        center = trainer.G(torch.randn(500, args.nz)).mean(0)
    param_sum = sum(p.sum().item() for m in (trainer.G, trainer.D) for p in m.parameters())
    print(f"d {d_loss:.4f} g {g_loss:.4f} center {center[0].item():.4f} param_sum {param_sum:.4f}")
