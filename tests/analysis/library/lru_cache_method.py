"""Train a one-layer self-attention tagger with a learned relative-position bias per distance."""

import functools

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

N_SEQUENCES = 64
SEQ_LEN = 6
D_MODEL = 8
N_TAGS = 3
EPOCHS = 2
BATCH_SIZE = 16


class RelativeAttentionTagger(nn.Module):
    def __init__(self, d_model, n_tags, max_len):
        super().__init__()
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.distance_bias = nn.Parameter(torch.zeros(2 * max_len - 1))
        self.out = nn.Linear(d_model, n_tags)
        self.max_len = max_len

    @functools.lru_cache(maxsize=None)
    def relative_bias(self, length):
        positions = torch.arange(length)
        distance = positions[None, :] - positions[:, None] + self.max_len - 1
        return self.distance_bias[distance]

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2) / x.shape[-1] ** 0.5
        scores = scores + self.relative_bias(x.shape[1])
        return self.out(scores.softmax(dim=-1) @ v)


x = torch.randn(N_SEQUENCES, SEQ_LEN, D_MODEL)
tags = torch.randint(0, N_TAGS, (N_SEQUENCES, SEQ_LEN))
loader = DataLoader(TensorDataset(x, tags), batch_size=BATCH_SIZE, shuffle=True)

model = RelativeAttentionTagger(D_MODEL, N_TAGS, max_len=SEQ_LEN)
opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)

for epoch in range(EPOCHS):
    total = 0.0
    for xb, yb in loader:
        logits = model(xb)
        loss = F.cross_entropy(logits.reshape(-1, N_TAGS), yb.reshape(-1))
        opt.zero_grad()
        loss.backward()  # expect: GG006
        opt.step()
        total += loss.item()
    print(f"epoch {epoch}: {total / len(loader):.6f}")

print(f"{loss.item():.6f}")
