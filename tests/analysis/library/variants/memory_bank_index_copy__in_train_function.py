"""Instance discrimination on a toy dataset: every sample is its own class, scored against a memory
bank holding the last embedding of each sample; the bank is refreshed with a momentum update of the
rows of the batch after each step (the non-parametric softmax of unsupervised feature learning)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

N_SAMPLES = 48
DIM_IN = 12
DIM_EMB = 8
BATCH = 12
EPOCHS = 3
TEMPERATURE = 0.2
MOMENTUM = 0.5


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(DIM_IN, 32), nn.ReLU(), nn.Linear(32, DIM_EMB))

    def forward(self, x):
        return F.normalize(self.net(x), dim=1)


class MemoryBank(nn.Module):
    """One normalised embedding per training sample."""

    def __init__(self, size, dim, momentum, temperature):
        super().__init__()
        self.momentum = momentum
        self.temperature = temperature
        self.register_buffer("memory", F.normalize(torch.randn(size, dim), dim=1))

    def forward(self, feats):
        return feats @ self.memory.t() / self.temperature

    def update(self, feats, idx):
        old = self.memory.index_select(0, idx)
        mixed = F.normalize(self.momentum * old + (1 - self.momentum) * feats, dim=1)
        self.memory.index_copy_(0, idx, mixed)


def augment(x):
    return x + 0.05 * torch.randn_like(x)


def train(encoder, bank, data, optimizer):
    for epoch in range(EPOCHS):
        total = 0.0
        for idx in torch.randperm(N_SAMPLES).split(BATCH):
            feats = encoder(augment(data[idx]))
            loss = F.cross_entropy(bank(feats), idx)
            optimizer.zero_grad()
            loss.backward()  # expect: GG003
            optimizer.step()
            bank.update(feats, idx)
            total += loss.item()
        print(f"epoch {epoch}: loss {total / (N_SAMPLES // BATCH):.4f}")


if __name__ == "__main__":
    data = torch.randn(N_SAMPLES, DIM_IN)
    encoder = Encoder()
    bank = MemoryBank(N_SAMPLES, DIM_EMB, MOMENTUM, TEMPERATURE)
    train(encoder, bank, data, torch.optim.SGD(encoder.parameters(), lr=0.1, momentum=0.9))
