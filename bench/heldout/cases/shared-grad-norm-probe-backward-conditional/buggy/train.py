"""Regression with a gradient-norm probe logged every few steps."""
import torch
import torch.nn as nn
import torch.nn.functional as F

LOG_EVERY = 5


def grad_norm(parameters):
    norms = [p.grad.detach().norm() for p in parameters if p.grad is not None]
    return torch.norm(torch.stack(norms)).item()


def train(model, optimizer, batches):
    history = []
    for step, (x, y) in enumerate(batches):
        pred = model(x)
        loss = F.huber_loss(pred, y)
        if (step + 1) % LOG_EVERY == 0:
            optimizer.zero_grad()
            loss.backward()
            history.append(grad_norm(model.parameters()))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item(), history


def make_batches(n, batch=16, dim=8):
    w = torch.randn(dim, 1)
    for _ in range(n):
        x = torch.randn(batch, dim)
        yield x, x @ w + 0.1 * torch.randn(batch, 1)


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.SiLU(), nn.Linear(32, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss, history = train(model, optimizer, make_batches(20))
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {loss:.6f} grad_norm {history[-1]:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
