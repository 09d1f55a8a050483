import torch
import torch.nn as nn
import torch.nn.functional as F

from .rotary import RotaryEmbedding, apply_rotary_emb


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.rotary = RotaryEmbedding(dim // heads, learned_freq=True)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        freqs = self.rotary(n)
        q, k = apply_rotary_emb(freqs, q), apply_rotary_emb(freqs, k)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(out.transpose(1, 2).reshape(b, n, d))


class TinyLM(nn.Module):
    def __init__(self, vocab, dim=32, heads=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.attn = CausalSelfAttention(dim, heads)
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        x = x + self.attn(self.norm(x))
        x = x + self.mlp(self.norm(x))
        return self.head(x)
