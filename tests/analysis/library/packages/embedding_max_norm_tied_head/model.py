"""A small language model whose token embedding shares its weight with the output head (weight
tying, as GPT-2 does it), the embedding rows kept within a maximum norm as they are looked up."""

import torch
import torch.nn as nn


class TinyLM(nn.Module):
    def __init__(self, vocab, dim, context):
        super().__init__()
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.wte = nn.Embedding(vocab, dim, max_norm=1.0)
        self.wte.weight = self.lm_head.weight
        self.wpe = nn.Embedding(context, dim)
        self.mix = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.norm = nn.LayerNorm(dim)

    def forward(self, idx):
        positions = torch.arange(idx.shape[1])
        x = self.wte(idx) + self.wpe(positions)
        x = x + self.mix(self.norm(x))
        return self.lm_head(self.norm(x))
