"""Train a one-layer attention regressor with rotary position embeddings of fixed frequencies (a
buffer); the cos/sin tables are cached per sequence length, as rotary implementations do."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

N_SEQUENCES = 64
SEQ_LEN = 8
D_MODEL = 8
EPOCHS = 2
BATCH_SIZE = 16


class LearnedRotary(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / 100 ** (torch.arange(0, dim, 2).float() / dim))
        self.cache = {}

    def forward(self, x):
        length = x.shape[1]
        if length not in self.cache:
            angles = torch.outer(torch.arange(length).float(), self.inv_freq)
            self.cache[length] = (angles.cos(), angles.sin())
        cos, sin = self.cache[length]
        even, odd = x[..., 0::2], x[..., 1::2]
        return torch.cat([even * cos - odd * sin, even * sin + odd * cos], dim=-1)


class RotaryAttention(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.rotary = LearnedRotary(d_model)
        self.out = nn.Linear(d_model, 1)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k = self.rotary(q), self.rotary(k)
        attention = (q @ k.transpose(1, 2) / x.shape[-1] ** 0.5).softmax(dim=-1)
        return self.out(attention @ v).squeeze(-1)


x = torch.randn(N_SEQUENCES, SEQ_LEN, D_MODEL)
y = x[:, :, 0].roll(shifts=2, dims=1)
loader = DataLoader(TensorDataset(x, y), batch_size=BATCH_SIZE, shuffle=True)

model = RotaryAttention(D_MODEL)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)

for epoch in range(EPOCHS):
    total = 0.0
    for xb, yb in loader:
        loss = F.mse_loss(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    print(f"epoch {epoch}: {total / len(loader):.6f}")

print(f"{loss.item():.6f}")
