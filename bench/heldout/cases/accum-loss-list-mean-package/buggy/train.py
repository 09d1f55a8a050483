"""Regression with the training loop living in a small `engine` package."""
import argparse

import torch

from engine import evaluate, train_one_epoch
from engine.model import Regressor

EPOCHS = 3
BATCH = 16


def make_loader(n, dim=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, dim, generator=g)
    w = torch.linspace(-1, 1, dim)
    y = x @ w + 0.1 * torch.randn(n, generator=g)
    return list(zip(x.split(BATCH), y.split(BATCH)))


def parse_args():
    parser = argparse.ArgumentParser(description="engine regression example")
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--lr", type=float, default=1e-2)
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    loader = make_loader(128)
    val_loader = make_loader(64, seed=1)
    model = Regressor(8)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    for epoch in range(args.epochs):
        train_loss = train_one_epoch(model, loader, optimizer)
        val_loss = evaluate(model, val_loader)
        scheduler.step()
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {train_loss:.6f} val {val_loss:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
