"""Truncated BPTT with an LSTM over a long signal in a while loop; the state is cut by a helper."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SEQ_LEN, BATCH, CHUNK, HIDDEN = 200, 4, 20, 16


def repackage(state):
    """Cut the graph between chunks (works for tensors and tuples of tensors)."""
    if isinstance(state, torch.Tensor):
        return state.detach()
    return tuple(repackage(s) for s in state)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(1, HIDDEN, batch_first=True)
        self.head = nn.Linear(HIDDEN, 1)

    def forward(self, x, state):
        y, state = self.lstm(x, state)
        return self.head(y), state


torch.manual_seed(71)
t = torch.arange(SEQ_LEN + 1, dtype=torch.float32)
signal = (torch.sin(0.07 * t + torch.rand(BATCH, 1) * 6) + 0.05 * torch.randn(BATCH, SEQ_LEN + 1)).unsqueeze(-1)
model = Model()
opt = torch.optim.Adam(model.parameters(), lr=5e-3)

losses = []
for epoch in range(3):
    state = (torch.zeros(1, BATCH, HIDDEN), torch.zeros(1, BATCH, HIDDEN))
    pos = 0
    while pos + CHUNK <= SEQ_LEN:
        state = repackage(state)
        pred, state = model(signal[:, pos:pos + CHUNK], state)
        loss = F.mse_loss(pred, signal[:, pos + 1:pos + CHUNK + 1])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        pos += CHUNK

param_sum = sum(p.sum().item() for p in model.parameters())
print(f"final loss {losses[-1]:.4f} steps {len(losses)} param_sum {param_sum:.4f}")
