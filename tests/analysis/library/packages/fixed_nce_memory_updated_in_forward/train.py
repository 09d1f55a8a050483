"""Instance discrimination with a memory of per-sample embeddings kept by `unsup`."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from unsup import NonParametricSoftmax

N_SAMPLES = 48
DIM_IN = 10
DIM_EMB = 6
BATCH = 12
EPOCHS = 2


def train(model, memory, loader, optimizer):
    total = 0.0
    for x, idx in loader:
        feats = F.normalize(model(x + 0.05 * torch.randn_like(x)), dim=1)
        loss = F.cross_entropy(memory(feats, idx), idx)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(loader)


if __name__ == "__main__":
    torch.manual_seed(0)
    data = torch.randn(N_SAMPLES, DIM_IN)
    model = nn.Sequential(nn.Linear(DIM_IN, 32), nn.ReLU(), nn.Linear(32, DIM_EMB))
    memory = NonParametricSoftmax(N_SAMPLES, DIM_EMB)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(EPOCHS):
        loader = [(data[idx], idx) for idx in torch.randperm(N_SAMPLES).split(BATCH)]
        print(f"epoch {epoch}: loss {train(model, memory, loader, optimizer):.4f}")
