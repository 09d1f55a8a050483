"""Classifier with hard-example rehearsal: batches whose loss is high are kept and replayed every REPLAY_EVERY steps."""
from collections import deque

import torch
import torch.nn as nn
import torch.nn.functional as F

REPLAY_EVERY = 10
HARD_THRESHOLD = 0.6


def make_data(n=600):
    x = torch.randn(n, 8)
    y = (torch.sin(2 * x[:, 0]) + x[:, 1] * x[:, 2] > 0).long()
    return x, y


def train(model, x_all, y_all, optimizer, steps, batch_size=32):
    hard = deque(maxlen=4)
    replayed = 0
    for step in range(1, steps + 1):
        idx = torch.randint(0, x_all.size(0), (batch_size,))
        logits = model(x_all[idx])
        loss = F.cross_entropy(logits, y_all[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if loss.item() > HARD_THRESHOLD:
            hard.append((x_all[idx], y_all[idx]))

        if step % REPLAY_EVERY == 0 and hard:
            replay_loss = torch.stack([F.cross_entropy(model(xb), yb) for xb, yb in hard]).mean()
            optimizer.zero_grad()
            replay_loss.backward()
            optimizer.step()
            replayed += 1
    return loss.item(), replayed


def main():
    torch.manual_seed(107)
    x, y = make_data()
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    loss, replayed = train(model, x, y, optimizer, steps=150)
    with torch.no_grad():
        acc = (model(x).argmax(-1) == y).float().mean().item()
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {loss:.4f} replays {replayed} acc {acc:.4f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
