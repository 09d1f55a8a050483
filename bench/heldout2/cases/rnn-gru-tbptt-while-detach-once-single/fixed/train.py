"""Truncated BPTT over one long multichannel signal with a GRU, chunk by chunk in a while loop."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

SEQ_LEN = 240
BATCH = 4
CHANNELS = 2
CHUNK = 24
HIDDEN = 16
EPOCHS = 3


class NextStep(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(CHANNELS, HIDDEN, batch_first=True)
        self.out = nn.Linear(HIDDEN, CHANNELS)

    def forward(self, x, h):
        y, h = self.gru(x, h)
        return self.out(y), h


def make_signal():
    t = torch.arange(SEQ_LEN + 1, dtype=torch.float32)
    base = torch.stack([torch.sin(0.11 * t), torch.sign(torch.sin(0.05 * t)) * 0.5], dim=-1)
    shift = torch.rand(BATCH, 1, CHANNELS) * 0.3
    return base.unsqueeze(0) + shift + 0.03 * torch.randn(BATCH, SEQ_LEN + 1, CHANNELS)


torch.manual_seed(3)
signal = make_signal()
model = NextStep()
opt = torch.optim.RMSprop(model.parameters(), lr=4e-3)

hidden = torch.zeros(1, BATCH, HIDDEN)
history = []
for epoch in range(EPOCHS):
    pos = 0
    while pos + CHUNK < SEQ_LEN:
        x = signal[:, pos:pos + CHUNK]
        y = signal[:, pos + 1:pos + CHUNK + 1]
        hidden = hidden.detach()  # truncate BPTT at the chunk boundary
        pred, hidden = model(x, hidden)
        loss = F.mse_loss(pred, y)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        history.append(loss.item())
        pos += CHUNK
    print(f"epoch {epoch} loss {sum(history[-9:]) / 9:.4f}")

param_sum = sum(p.sum().item() for p in model.parameters())
print(f"final loss {history[-1]:.4f} steps {len(history)} param_sum {param_sum:.4f}")
