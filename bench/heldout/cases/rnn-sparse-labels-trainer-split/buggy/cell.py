import torch
import torch.nn as nn


class OnlineGRU(nn.Module):
    def __init__(self, in_dim, hidden, n_classes):
        super().__init__()
        self.cell = nn.GRUCell(in_dim, hidden)
        self.readout = nn.Linear(hidden, n_classes)
        self.hidden = hidden

    def initial_state(self, batch=1):
        return torch.zeros(batch, self.hidden)

    def forward(self, x, h):
        h = self.cell(x, h)
        return self.readout(h), h
