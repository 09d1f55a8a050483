"""Streaming anomaly scorer: a GRU reads a long signal chunk by chunk and is updated
every ACCUM chunks on the accumulated reconstruction loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F

ACCUM = 3
CHUNK = 10
FEATURES = 5


class Scorer(nn.Module):
    def __init__(self, features, hidden=20):
        super().__init__()
        self.gru = nn.GRU(features, hidden, batch_first=True)
        self.decode = nn.Linear(hidden, features)

    def forward(self, x, h=None):
        out, h = self.gru(x, h)
        return self.decode(out), h


def chunks(signal, size):
    for start in range(0, signal.size(1) - size + 1, size):
        yield signal[:, start:start + size]


def main():
    torch.manual_seed(0)
    signal = torch.randn(4, 150, FEATURES).cumsum(1) * 0.1
    model = Scorer(FEATURES)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)

    h = None
    loss = 0.0
    updates = []
    for i, x in enumerate(chunks(signal, CHUNK)):
        recon, h = model(x[:, :-1], h)
        loss = loss + F.mse_loss(recon, x[:, 1:])
        if (i + 1) % ACCUM == 0:
            opt.zero_grad()
            (loss / ACCUM).backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            opt.step()
            updates.append(loss.item() / ACCUM)
            loss = 0.0

    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {updates[-1]:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
