"""Next-token prediction on a periodic token stream with rotary attention."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from rope import RotaryAttention

torch.manual_seed(0)

VOCAB, DIM, SEQ, BATCH = 12, 32, 16, 8


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)
        self.attn = RotaryAttention(DIM)
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, tokens):
        h = self.emb(tokens)
        return self.head(h + self.attn(h))


def batch():
    start = torch.randint(0, VOCAB, (BATCH, 1))
    return (start + torch.arange(SEQ + 1)) % VOCAB


model = Model()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
for step in range(20):
    seq = batch()
    logits = model(seq[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), seq[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

param_sum = sum(p.sum().item() for p in model.parameters())
print(f"final loss {loss.item():.6f} param_sum {param_sum:.6f}")
