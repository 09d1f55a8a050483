import math

import torch
import torch.nn as nn


def sinusoid_table(n_pos, dim):
    position = torch.arange(n_pos).unsqueeze(1).float()
    div = torch.exp(torch.arange(0, dim, 2).float() * (-math.log(10000.0) / dim))
    table = torch.zeros(n_pos, dim)
    table[:, 0::2] = torch.sin(position * div)
    table[:, 1::2] = torch.cos(position * div)
    return table


class TinyTransformer(nn.Module):
    def __init__(self, vocab, dim=32, heads=4, n_pos=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos_proj = nn.Linear(dim, dim)
        self.register_buffer("sinusoids", sinusoid_table(n_pos, dim))
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=64, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=1)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, tokens, pos):
        x = self.embed(tokens) + pos[: tokens.size(1)]
        return self.lm_head(self.encoder(x))
