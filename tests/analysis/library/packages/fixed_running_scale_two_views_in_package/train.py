"""Siamese self-supervised training: two noisy views of each batch go through the same encoder, and
the cosine similarity of their embeddings is maximised (with a variance term against collapse)."""

import torch
import torch.nn.functional as F

from selfsup.layers import Encoder

BATCH = 16
STEPS = 4
EPOCHS = 2


def views(x):
    return x + 0.1 * torch.randn_like(x), x * (1 + 0.1 * torch.randn_like(x))


def train(model, loader, optimizer):
    model.train()
    for x in loader:
        first, second = views(x)
        z1 = F.normalize(model(first), dim=1)
        z2 = F.normalize(model(second), dim=1)
        loss = (2 - 2 * (z1 * z2).sum(dim=1)).mean() + F.relu(1 - z1.std(dim=0)).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


def main():
    torch.manual_seed(0)
    model = Encoder()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(EPOCHS):
        loader = [torch.randn(BATCH, 8) for _ in range(STEPS)]
        print(f"epoch {epoch}: loss {train(model, loader, optimizer):.4f}, scale {model.norm.scale.item():.4f}")


if __name__ == "__main__":
    main()
