"""Gradient accumulation over micro-batches in a step-budgeted while loop."""
import argparse
import io

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_model():
    return nn.Sequential(nn.Linear(8, 32), nn.SiLU(), nn.Linear(32, 32), nn.SiLU(), nn.Linear(32, 1))


def micro_batches(g, size):
    while True:
        x = torch.randn(size, 8, generator=g)
        yield x, (x[:, :2].prod(1) + x[:, 2].sin()).unsqueeze(1)


def train(model, optimizer, batches, max_updates, accum, log_every):
    running_loss, micro, updates = 0.0, 0, 0
    history = []
    optimizer.zero_grad(set_to_none=True)
    while updates < max_updates:
        x, y = next(batches)
        loss = F.mse_loss(model(x), y) / accum
        loss.backward()
        running_loss += loss.item()
        micro += 1
        if micro % accum == 0:
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            updates += 1
            history.append(running_loss)
            if updates % log_every == 0:
                print(f"update {updates} loss {running_loss:.4f}")
            running_loss = 0.0
    return history


@torch.no_grad()
def evaluate(model, batches, n=4):
    model.eval()
    total = 0.0
    for _ in range(n):
        x, y = next(batches)
        total += F.mse_loss(model(x), y).item()
    model.train()
    return total / n


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--updates", type=int, default=15)
    ap.add_argument("--accum", type=int, default=3)
    ap.add_argument("--micro-batch", type=int, default=16)
    args = ap.parse_args()
    torch.manual_seed(14)
    g = torch.Generator().manual_seed(14)
    model = make_model()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    batches = micro_batches(g, args.micro_batch)
    history = train(model, optimizer, batches, args.updates, args.accum, log_every=5)
    val = evaluate(model, batches)
    ckpt = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, ckpt)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"loss {history[-1]:.4f} val {val:.4f} param_sum {param_sum:.4f}")
