import torch.nn as nn

from .layers import RelPosSelfAttention


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = RelPosSelfAttention(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class SeqClassifier(nn.Module):
    def __init__(self, vocab, dim=16, depth=2, n_classes=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.Sequential(*[Block(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, n_classes)

    def forward(self, tokens):
        return self.head(self.blocks(self.embed(tokens)).mean(1))
