"""Full-batch L-BFGS fit of a small network."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def data(n=64):
    t = torch.linspace(-2, 2, n).unsqueeze(1)
    return t, torch.tanh(2 * t) + 0.1 * t ** 2


def build():
    return nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))


def fit(model, x, y, steps=4):
    optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=5, line_search_fn="strong_wolfe")
    history = []

    def closure():
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        return loss

    for step in range(steps):
        loss = optimizer.step(closure)
        history.append(loss.item())
    return history


def main():
    torch.manual_seed(0)
    x, y = data()
    model = build()
    history = fit(model, x, y)
    with torch.no_grad():
        final = F.mse_loss(model(x), y).item()
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {final:.6f} first {history[0]:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
