"""Stacked LSTM cells over a stream, trained chunk by chunk by a Trainer."""
import torch
import torch.nn as nn
import torch.nn.functional as F

IN, HID, LAYERS, BATCH = 3, 16, 2, 4


class StackedLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.cells = nn.ModuleList(nn.LSTMCell(IN if i == 0 else HID, HID) for i in range(LAYERS))
        self.head = nn.Linear(HID, 1)

    def forward(self, x_t, states):
        new_states, inp = [], x_t
        for cell, (h, c) in zip(self.cells, states):
            h, c = cell(inp, (h, c))
            new_states.append((h, c))
            inp = h
        return self.head(inp), new_states


class Trainer:
    def __init__(self, model, lr=5e-3):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.states = [(torch.zeros(BATCH, HID), torch.zeros(BATCH, HID)) for _ in range(LAYERS)]

    def train_chunk(self, xs, ys):
        self.states = [(h.detach(), c.detach()) for h, c in self.states]
        loss = 0.0
        for t in range(xs.size(0)):
            out, self.states = self.model(xs[t], self.states)
            loss = loss + F.mse_loss(out, ys[t])
        loss = loss / xs.size(0)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    xs = torch.randn(60, BATCH, IN)
    ys = xs[..., :1].cumsum(0) * 0.1
    trainer = Trainer(StackedLSTM())
    losses = [trainer.train_chunk(xs[i:i + 6], ys[i:i + 6]) for i in range(0, 60, 6)]
    param_sum = sum(p.sum().item() for p in trainer.model.parameters())
    print(f"final loss {losses[-1]:.6f} param_sum {param_sum:.6f}")
