import torch.nn as nn


class CharGRU(nn.Module):
    def __init__(self, vocab, emb=16, hidden=48):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.gru = nn.GRU(emb, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, x, hidden=None):
        o, hidden = self.gru(self.emb(x), hidden)
        return self.out(o), hidden
