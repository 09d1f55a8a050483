import argparse
import logging

import torch
import torch.nn.functional as F

from net import DeeplySupervisedNet
from utils import AverageMeter, backprop

logging.basicConfig(level=logging.WARNING)


def get_loader(n_batches, batch, w, g):
    for _ in range(n_batches):
        x = torch.randn(batch, 20, generator=g)
        yield x, (x @ w).argmax(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--aux-weight", type=float, default=0.3)
    ap.add_argument("--clip", type=float, default=2.0)
    args = ap.parse_args()
    torch.manual_seed(71)
    g = torch.Generator().manual_seed(71)
    w = torch.randn(20, 5, generator=g)
    model = DeeplySupervisedNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    for epoch in range(args.epochs):
        model.train()
        meter = AverageMeter()
        for x, y in get_loader(8, 32, w, g):
            out, aux = model(x)
            loss = F.cross_entropy(out, y)
            aux_loss = args.aux_weight * F.cross_entropy(aux, y)
            backprop(loss, optimizer, retain=True, clip=args.clip, params=model.parameters())
            backprop(aux_loss, optimizer, clip=args.clip, params=model.parameters())
            meter.update(loss.item(), len(y))
        model.eval()
        with torch.no_grad():
            x, y = next(get_loader(1, 256, w, g))
            acc = (model(x).argmax(1) == y).float().mean().item()
        print(f"epoch {epoch} loss {meter.avg:.4f} acc {acc:.3f}")
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"loss {meter.avg:.4f} acc {acc:.3f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
