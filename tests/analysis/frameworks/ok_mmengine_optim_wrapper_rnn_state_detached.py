"""Train a small LSTM forecaster with mmengine's OptimWrapper (update_params runs backward, step and
zero_grad), carrying the LSTM state (detached) across consecutive windows of one long series."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from mmengine.optim import OptimWrapper

WINDOW = 24
HIDDEN = 32


class Forecaster(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.lstm = nn.LSTM(1, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x, state=None):
        out, state = self.lstm(x, state)
        return self.head(out), state


def windows(series, size):
    for start in range(0, series.shape[1] - size - 1, size):
        yield series[:, start:start + size, None], series[:, start + 1:start + size + 1, None]


def train(epochs=3):
    steps = torch.arange(0, 2000, dtype=torch.float32)
    series = torch.stack([torch.sin(steps * 2 * math.pi / p) for p in (50.0, 80.0, 120.0)])
    model = Forecaster(HIDDEN)
    optim_wrapper = OptimWrapper(torch.optim.Adam(model.parameters(), lr=1e-3), clip_grad=dict(max_norm=1.0))
    for epoch in range(epochs):
        state = None
        total = 0.0
        for x, y in windows(series, WINDOW):
            pred, state = model(x, state)
            state = tuple(s.detach() for s in state)
            loss = F.mse_loss(pred, y)
            optim_wrapper.update_params(loss)
            total += loss.item()
        print(f"epoch {epoch}: {total:.4f}")
    return model


if __name__ == "__main__":
    train()
