"""Truncated BPTT on a long noisy sine stream: predict the next value."""
import torch
import torch.nn.functional as F

from models import StackedLSTMRegressor
from utils import count_parameters, repackage_hidden

BPTT, BSZ, EPOCHS, LR = 12, 4, 2, 5e-3


def make_stream(length, bsz):
    t = torch.arange(length).float()
    phase = torch.rand(bsz) * 6.28
    x = torch.sin(t[:, None] * 0.2 + phase) + 0.05 * torch.randn(length, bsz)
    return x.unsqueeze(-1)


torch.manual_seed(12)
stream = make_stream(121, BSZ)
model = StackedLSTMRegressor(1)
print(f"{count_parameters(model)} parameters")
optimizer = torch.optim.Adam(model.parameters(), lr=LR)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=1)

for epoch in range(EPOCHS):
    hidden = model.init_hidden(BSZ)
    i, losses = 0, []
    while i < stream.size(0) - 1:
        seq_len = min(BPTT, stream.size(0) - 1 - i)
        x, y = stream[i:i + seq_len], stream[i + 1:i + 1 + seq_len].squeeze(-1)
        hidden = repackage_hidden(hidden)
        pred, hidden = model(x, hidden)
        loss = F.mse_loss(pred, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        i += seq_len
    epoch_loss = sum(losses) / len(losses)
    scheduler.step(epoch_loss)
    print(f"epoch {epoch} loss {epoch_loss:.4f}")

param_sum = sum(p.sum().item() for p in model.parameters())
print(f"loss {epoch_loss:.4f} param_sum {param_sum:.4f}")
