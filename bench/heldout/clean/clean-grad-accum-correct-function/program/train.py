"""Gradient accumulation done right."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_model():
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 3))


def train_epoch(model, batches, optimizer, accum_steps=4):
    model.train()
    optimizer.zero_grad()
    running = 0.0
    for i, (x, y) in enumerate(batches):
        loss = F.cross_entropy(model(x), y) / accum_steps
        loss.backward()
        running += loss.item()
        if (i + 1) % accum_steps == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
            last = running
            running = 0.0
    return last


def make_batches(n=256, batch=8):
    x = torch.randn(n, 16)
    y = x[:, :3].argmax(1)
    return list(zip(x.split(batch), y.split(batch)))


def main():
    torch.manual_seed(0)
    model = make_model()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    batches = make_batches()
    for epoch in range(2):
        loss = train_epoch(model, batches, optimizer)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {loss:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
