import argparse

import torch
import torch.nn.functional as F

from data import make_loaders
from model import TabularNet


def train_one_epoch(model, loader, optimizer, scheduler, accum_steps, log_every, epoch):
    model.train()
    loss_accum = 0.0
    for i, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y)
        loss_accum = loss_accum + loss / accum_steps
        if (i + 1) % accum_steps == 0:
            loss_accum.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        if (i + 1) % log_every == 0:
            print(f"epoch {epoch} it {i + 1} loss {loss_accum.item():.4f} lr {scheduler.get_last_lr()[0]:.5f}")
            loss_accum = 0.0
    return loss.item()


@torch.no_grad()
def validate(model, loader):
    model.eval()
    correct = total = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
        total += len(y)
    return correct / total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--accum-steps", type=int, default=2)
    ap.add_argument("--log-every", type=int, default=6)
    ap.add_argument("--lr", type=float, default=3e-3)
    args = ap.parse_args()
    torch.manual_seed(42)
    train_loader, val_loader = make_loaders()
    model = TabularNet(10, 3)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-2)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
    for epoch in range(args.epochs):
        last = train_one_epoch(model, train_loader, optimizer, scheduler, args.accum_steps, args.log_every, epoch)
        acc = validate(model, val_loader)
        print(f"epoch {epoch} val_acc {acc:.3f}")
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"last loss {last:.4f} val_acc {acc:.3f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
