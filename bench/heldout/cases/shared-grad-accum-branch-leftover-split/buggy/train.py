"""1-D CNN on synthetic waveforms; gradient accumulation is configurable."""
import argparse

import torch

from models import ConvNet1d
from trainer import train_epoch


def make_waveforms(n, length=32, n_classes=3):
    t = torch.linspace(0, 1, length)
    labels = torch.randint(0, n_classes, (n,))
    freqs = (labels.float() + 1.0) * 3.0
    x = torch.sin(2 * torch.pi * freqs[:, None] * t[None, :]) + 0.3 * torch.randn(n, length)
    return x.unsqueeze(1), labels


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--accum-steps", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.05)
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    x, y = make_waveforms(128)
    loader = list(zip(x.split(16), y.split(16)))
    model = ConvNet1d()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    for epoch in range(args.epochs):
        loss = train_epoch(model, loader, optimizer, accum_steps=args.accum_steps)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {loss:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
