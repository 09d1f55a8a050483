import torch
import torch.nn as nn


class GRUForecaster(nn.Module):
    """Predicts the next value of each channel from a window of a multichannel series."""

    def __init__(self, n_channels, hidden_size=24, num_layers=2):
        super().__init__()
        self.gru = nn.GRU(n_channels, hidden_size, num_layers=num_layers, batch_first=True)
        self.head = nn.Linear(hidden_size, n_channels)
        self.num_layers = num_layers
        self.hidden_size = hidden_size

    def init_hidden(self, batch_size):
        return torch.zeros(self.num_layers, batch_size, self.hidden_size)

    def forward(self, window, hidden):
        out, hidden = self.gru(window, hidden)
        return self.head(out), hidden
