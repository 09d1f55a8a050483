"""Unsupervised instance discrimination with a memory bank; evaluated by nearest-neighbour label agreement."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from npid import InstanceDiscriminationTrainer

N, DIM = 256, 8


def make_data():
    centers = torch.randn(4, 12) * 1.5
    y = torch.randint(0, 4, (N,))
    return centers[y] + 0.8 * torch.randn(N, 12), y


def main():
    torch.manual_seed(59)
    x, y = make_data()
    encoder = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, DIM))
    trainer = InstanceDiscriminationTrainer(encoder, N, DIM)
    for epoch in range(4):
        perm = torch.randperm(N)
        for i in range(0, N, 32):
            idx = perm[i:i + 32]
            loss = trainer.step(x[idx] + 0.1 * torch.randn(len(idx), 12), idx)
        print(f"epoch {epoch} loss {loss:.4f}")
    with torch.no_grad():
        f = F.normalize(encoder(x), dim=1)
        sim = f @ f.T - 2 * torch.eye(N)
        knn_acc = (y[sim.argmax(1)] == y).float().mean().item()
    param_sum = sum(p.sum().item() for p in encoder.parameters())
    print(f"final loss {loss:.4f} knn_acc {knn_acc:.4f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
