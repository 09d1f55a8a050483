import torch
import torch.nn as nn


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_emb(freqs, t):
    return t * freqs.cos() + rotate_half(t) * freqs.sin()


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, theta=10000.0, learned_freq=False):
        super().__init__()
        freqs = 1.0 / (theta ** (torch.arange(0, dim, 2).float() / dim))
        self.learned_freq = learned_freq
        if learned_freq:
            self.freqs = nn.Parameter(freqs)
        else:
            self.register_buffer("freqs", freqs, persistent=False)
        self.cache = {}

    def forward(self, seq_len):
        if seq_len in self.cache:
            return self.cache[seq_len]
        t = torch.arange(seq_len, dtype=self.freqs.dtype)
        freqs = torch.einsum("i,j->ij", t, self.freqs)
        freqs = torch.cat((freqs, freqs), dim=-1)
        self.cache[seq_len] = freqs
        return freqs
