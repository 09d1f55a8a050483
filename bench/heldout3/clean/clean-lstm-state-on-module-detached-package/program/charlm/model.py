import torch
import torch.nn as nn


class CharLSTM(nn.Module):
    """Stateful character model: the (h, c) state lives on the module between calls."""

    def __init__(self, vocab, emb=12, hidden=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)
        self.hidden_size = hidden
        self.state = None

    def reset_state(self, batch):
        self.state = (torch.zeros(1, batch, self.hidden_size), torch.zeros(1, batch, self.hidden_size))

    def detach_state(self):
        h, c = self.state
        self.state = (h.detach(), c.detach())

    def forward(self, x):
        y, self.state = self.lstm(self.emb(x), self.state)
        return self.out(y)
