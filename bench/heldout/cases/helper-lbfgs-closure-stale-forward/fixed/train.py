"""Curve fitting with L-BFGS (full batch): a small network fits a damped oscillation."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_data(n=64):
    t = torch.linspace(0, 4, n).unsqueeze(1)
    y = torch.exp(-0.5 * t) * torch.cos(3 * t)
    return t, y


class Fitter(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                 nn.Linear(hidden, 1))

    def forward(self, t):
        return self.net(t)


def fit(model, x, y, outer_steps=4):
    optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=5, history_size=10,
                                  line_search_fn="strong_wolfe")
    losses = []
    for step in range(outer_steps):
        def closure():
            optimizer.zero_grad()
            pred = model(x)
            loss = F.mse_loss(pred, y)
            loss.backward()
            return loss

        loss = optimizer.step(closure)
        losses.append(loss.item())
    return losses


def main():
    torch.manual_seed(0)
    x, y = make_data()
    model = Fitter()
    losses = fit(model, x, y)
    with torch.no_grad():
        final = F.mse_loss(model(x), y).item()
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {final:.6f} first {losses[0]:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
