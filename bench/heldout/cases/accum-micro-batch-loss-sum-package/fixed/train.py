"""Classification with micro-batching handled by trainkit.Trainer."""
import argparse

import torch
import torch.nn as nn

from trainkit import Trainer
from trainkit.models import make_mlp

IN_DIM, N_CLASSES = 24, 5
BATCH = 32


def synthetic(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, IN_DIM, generator=g)
    proj = torch.randn(IN_DIM, N_CLASSES, generator=torch.Generator().manual_seed(123))
    return x, (x @ proj).argmax(1)


def parse_args():
    parser = argparse.ArgumentParser(description="micro-batched classifier")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--micro-batches", type=int, default=4)
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    x_train, y_train = synthetic(192, 0)
    x_val, y_val = synthetic(64, 1)
    model = make_mlp(IN_DIM, N_CLASSES)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    trainer = Trainer(model, nn.CrossEntropyLoss(), optimizer, micro_batches=args.micro_batches)
    for epoch in range(args.epochs):
        for xb, yb in zip(x_train.split(BATCH), y_train.split(BATCH)):
            train_loss = trainer.train_step(xb, yb)
    val_loss = trainer.evaluate(x_val, y_val)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {train_loss:.6f} val {val_loss:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
