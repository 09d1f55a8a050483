"""Train a one-layer causal self-attention model to predict the next vector; the mask is cached."""

import functools

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

N_SEQUENCES = 64
SEQ_LEN = 6
D_MODEL = 8
EPOCHS = 2
BATCH_SIZE = 16


@functools.lru_cache(maxsize=8)
def causal_mask(length):
    return torch.triu(torch.ones(length, length), diagonal=1).bool()


class CausalAttention(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2) / x.shape[-1] ** 0.5
        scores = scores.masked_fill(causal_mask(x.shape[1]), float("-inf"))
        return self.out(scores.softmax(dim=-1) @ v)


sequences = torch.randn(N_SEQUENCES, SEQ_LEN + 1, D_MODEL).cumsum(dim=1)
loader = DataLoader(TensorDataset(sequences[:, :-1], sequences[:, 1:]), batch_size=BATCH_SIZE, shuffle=True)

model = CausalAttention(D_MODEL)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)

for epoch in range(EPOCHS):
    total = 0.0
    for inputs, targets in loader:
        loss = F.mse_loss(model(inputs), targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    print(f"epoch {epoch}: {total / len(loader):.6f}")

print(f"{loss.item():.6f}")
