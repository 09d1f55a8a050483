"""Nearest-prototype classifier: the encoder is trained so samples sit close to their class prototype."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from protos import class_prototypes, prototype_logits

N_CLASSES = 4
BATCH = 32


def make_data(n=320):
    centers = torch.randn(N_CLASSES, 10) * 1.2
    y = torch.randint(0, N_CLASSES, (n,))
    return centers[y] + torch.randn(n, 10), y


def main():
    torch.manual_seed(31)
    x, y = make_data()
    encoder = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 8))
    optimizer = torch.optim.SGD(encoder.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(5):
        with torch.no_grad():
            prototypes = class_prototypes(encoder, x, y, N_CLASSES)
        perm = torch.randperm(x.size(0))
        correct = 0
        for i in range(0, x.size(0), BATCH):
            idx = perm[i:i + BATCH]
            logits = prototype_logits(encoder(x[idx]), prototypes)
            loss = F.cross_entropy(logits, y[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            correct += (logits.argmax(-1) == y[idx]).sum().item()
        print(f"epoch {epoch} loss {loss.item():.4f} acc {correct / x.size(0):.4f}")
    param_sum = sum(p.sum().item() for p in encoder.parameters())
    print(f"final loss {loss.item():.4f} acc {correct / x.size(0):.4f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
