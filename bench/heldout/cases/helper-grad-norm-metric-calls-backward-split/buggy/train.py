"""Regression with periodic logging of the gradient norm (see metrics.py)."""
import torch
import torch.nn.functional as F

from metrics import grad_norm, rmse
from models import make_model

IN_DIM = 6


def train(model, optimizer, x, y, epochs=3, batch_size=32, log_interval=4):
    log = []
    step = 0
    for epoch in range(epochs):
        for xb, yb in zip(x.split(batch_size), y.split(batch_size)):
            pred = model(xb)
            loss = F.mse_loss(pred, yb)
            if step % log_interval == log_interval - 1:
                log.append((step, loss.item(), grad_norm(loss, model)))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
    return log


def main():
    torch.manual_seed(0)
    x = torch.randn(160, IN_DIM)
    y = (x[:, :2].sum(1, keepdim=True) ** 2) * 0.5
    model = make_model(IN_DIM)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    log = train(model, optimizer, x, y)
    with torch.no_grad():
        err = rmse(model(x), y)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final rmse {err:.6f} last_gnorm {log[-1][2]:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
