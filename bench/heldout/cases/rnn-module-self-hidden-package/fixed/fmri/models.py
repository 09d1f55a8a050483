import torch
import torch.nn as nn


class FMRILSTM(nn.Module):
    def __init__(self, input_dim, hidden_dim, batch_size):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.lstm = nn.LSTM(input_dim, hidden_dim, num_layers=1, batch_first=True)
        self.linear = nn.Linear(hidden_dim, 1)
        self.dropout = nn.Dropout(p=0.2)
        self.hidden = self.init_hidden(batch_size)

    def init_hidden(self, batch_size):
        return (torch.zeros(1, batch_size, self.hidden_dim),
                torch.zeros(1, batch_size, self.hidden_dim))

    def forward(self, x):
        lstm_out, self.hidden = self.lstm(x, self.hidden)
        out = self.dropout(lstm_out[:, -1, :])
        return torch.sigmoid(self.linear(out)).squeeze(-1)
