import torch
import torch.nn as nn

__all__ = ["WordLSTM"]


class WordLSTM(nn.Module):
    """Small word-level language model that keeps its recurrent state between calls."""

    def __init__(self, ntoken, ninp=16, nhid=32, nlayers=1, dropout=0.1):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid, self.nlayers = nhid, nlayers
        self.hidden = None

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        self.hidden = (weight.new_zeros(self.nlayers, bsz, self.nhid),
                       weight.new_zeros(self.nlayers, bsz, self.nhid))

    def forward(self, src):
        emb = self.drop(self.encoder(src))
        output, self.hidden = self.rnn(emb, self.hidden)
        return self.decoder(self.drop(output))
