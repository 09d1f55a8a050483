import torch
import torch.nn as nn


class StreamForecaster(nn.Module):
    """One GRU shared by all sensor streams, one-step-ahead forecasts."""

    def __init__(self, n_features=3, hidden=24):
        super().__init__()
        self.gru = nn.GRU(n_features, hidden, batch_first=True)
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, n_features))

    def forward(self, x, h=None):
        out, h = self.gru(x, h)
        return self.head(out), h
