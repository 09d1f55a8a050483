"""Unsupervised feature learning by instance discrimination, the bank kept by the `contrast` package."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from contrast import MemoryBank

N_SAMPLES = 48
DIM_IN = 12
DIM_EMB = 8
BATCH = 12
EPOCHS = 3


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(DIM_IN, 32), nn.ReLU(), nn.Linear(32, DIM_EMB))

    def forward(self, x):
        return F.normalize(self.net(x), dim=1)


def train(model, bank, loader, optimizer):
    total = 0.0
    for x, idx in loader:
        feats = model(x + 0.05 * torch.randn_like(x))
        loss = bank(feats, idx)
        optimizer.zero_grad()
        loss.backward()  # expect: GG003
        optimizer.step()
        bank.update(feats, idx)
        total += loss.item()
    return total / len(loader)


def main():
    torch.manual_seed(0)
    data = torch.randn(N_SAMPLES, DIM_IN)
    model = Encoder()
    bank = MemoryBank(N_SAMPLES, DIM_EMB)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(EPOCHS):
        order = torch.randperm(N_SAMPLES).split(BATCH)
        loader = [(data[idx], idx) for idx in order]
        print(f"epoch {epoch}: loss {train(model, bank, loader, optimizer):.4f}")


if __name__ == "__main__":
    main()
