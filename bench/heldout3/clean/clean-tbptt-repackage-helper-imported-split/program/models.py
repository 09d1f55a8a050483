import torch.nn as nn


class StackedLSTMRegressor(nn.Module):
    def __init__(self, n_in, hidden=24, layers=2):
        super().__init__()
        self.rnn = nn.LSTM(n_in, hidden, num_layers=layers)
        self.fc = nn.Linear(hidden, 1)
        self.hidden, self.layers = hidden, layers

    def init_hidden(self, bsz):
        w = next(self.parameters())
        return (w.new_zeros(self.layers, bsz, self.hidden), w.new_zeros(self.layers, bsz, self.hidden))

    def forward(self, x, hidden):
        out, hidden = self.rnn(x, hidden)
        return self.fc(out).squeeze(-1), hidden
