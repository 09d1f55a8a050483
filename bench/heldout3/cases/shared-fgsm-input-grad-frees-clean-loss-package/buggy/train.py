import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from advtrain import evaluate, train_epoch


def get_args():
    p = argparse.ArgumentParser(description="FGSM adversarial training on a toy 2-class problem")
    p.add_argument("--eps", type=float, default=0.1)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=1e-2)
    return p.parse_args()


if __name__ == "__main__":
    args = get_args()
    torch.manual_seed(31)
    x = torch.randn(256, 10)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).long()
    loader = DataLoader(TensorDataset(x[:192], y[:192]), batch_size=32, shuffle=True)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[2], gamma=0.1)
    for epoch in range(args.epochs):
        stats = train_epoch(model, loader, optimizer, args.eps)
        scheduler.step()
        print(f"epoch {epoch} clean {stats['clean']:.4f} adv {stats['adv']:.4f}")
    clean_acc, adv_acc = evaluate(model, x[192:], y[192:], args.eps)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"clean_acc {clean_acc:.3f} adv_acc {adv_acc:.3f} param_sum {param_sum:.4f}")
