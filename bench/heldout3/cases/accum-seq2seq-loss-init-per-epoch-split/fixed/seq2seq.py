import torch
import torch.nn as nn

SOS, EOS = 0, 1


class EncoderRNN(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)

    def forward(self, src):
        _, h = self.gru(self.embedding(src))
        return h


class DecoderRNN(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, token, h):
        out, h = self.gru(torch.relu(self.embedding(token)), h)
        return self.out(out.squeeze(1)), h
