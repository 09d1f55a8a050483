"""Stateful GRU forecaster: the hidden state flows from one window to the next."""
import torch
import torch.nn.functional as F

from data import make_series, windows
from models import GRUForecaster

N_CHANNELS = 3
BATCH_SIZE = 8
WINDOW = 12
EPOCHS = 2


def main():
    torch.manual_seed(0)
    series = make_series(200, N_CHANNELS, BATCH_SIZE)
    model = GRUForecaster(N_CHANNELS)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)

    losses = []
    model.train()
    for epoch in range(EPOCHS):
        hidden = model.init_hidden(BATCH_SIZE)
        for window, target in windows(series, WINDOW):
            hidden = hidden.detach()
            optimizer.zero_grad()
            pred, hidden = model(window, hidden)
            loss = F.mse_loss(pred, target)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()

    val_loss = evaluate(model, make_series(60, N_CHANNELS, BATCH_SIZE))
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {losses[-1]:.6f} val {val_loss:.6f} param_sum {param_sum:.6f}")


@torch.no_grad()
def evaluate(model, series):
    model.eval()
    hidden = model.init_hidden(series.size(0))
    total, n = 0.0, 0
    for window, target in windows(series, WINDOW):
        pred, hidden = model(window, hidden)
        total += F.mse_loss(pred, target).item()
        n += 1
    return total / n


if __name__ == "__main__":
    main()
