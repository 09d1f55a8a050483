"""Regression with gradient-norm logging taken from the real backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F

LOG_EVERY = 5


def train(model, optimizer, batches, max_norm=10.0):
    history = []
    for step, (x, y) in enumerate(batches):
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        total_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        if (step + 1) % LOG_EVERY == 0:
            history.append(total_norm.item())
        optimizer.step()
    return loss.item(), history


def make_batches(n, batch=16, dim=8):
    w = torch.randn(dim, 1)
    for _ in range(n):
        x = torch.randn(batch, dim)
        yield x, x @ w


def summarize(history):
    return min(history), max(history), sum(history) / len(history)


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.SiLU(), nn.Linear(32, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss, history = train(model, optimizer, make_batches(20))
    lo, hi, mean = summarize(history)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {loss:.6f} grad_norm {history[-1]:.6f} range {lo:.4f}-{hi:.4f} mean {mean:.4f} "
          f"param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
