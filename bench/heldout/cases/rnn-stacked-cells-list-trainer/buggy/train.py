"""Stacked GRU cells trained on a long stream, chunk by chunk, by a small Trainer class."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

INPUT, HIDDEN, LAYERS, BATCH = 4, 16, 3, 6


class StackedGRU(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers):
        super().__init__()
        self.cells = nn.ModuleList(
            nn.GRUCell(input_size if i == 0 else hidden_size, hidden_size)
            for i in range(num_layers)
        )

    def forward(self, x_t, states):
        new_states = []
        inp = x_t
        for cell, h in zip(self.cells, states):
            h = cell(inp, h)
            new_states.append(h)
            inp = h
        return inp, new_states


class Trainer:
    def __init__(self, model, head, lr=1e-2):
        self.model = model
        self.head = head
        params = list(model.parameters()) + list(head.parameters())
        self.opt = torch.optim.Adam(params, lr=lr)
        self.states = [torch.zeros(BATCH, HIDDEN) for _ in range(LAYERS)]

    def train_chunk(self, xs, ys):
        self.opt.zero_grad()
        loss = 0.0
        for t in range(xs.size(0)):
            out, self.states = self.model(xs[t], self.states)
            loss = loss + F.mse_loss(self.head(out), ys[t])
        loss = loss / xs.size(0)
        loss.backward()
        self.opt.step()
        return loss.item()

    def fit(self, stream, targets, chunk=5):
        history = []
        for start in range(0, stream.size(0) - chunk + 1, chunk):
            history.append(self.train_chunk(stream[start:start + chunk], targets[start:start + chunk]))
        return history


def make_stream(length):
    x = torch.randn(length, BATCH, INPUT)
    y = torch.cumsum(x[..., :1], dim=0) * 0.1
    return x, y


if __name__ == "__main__":
    stream, targets = make_stream(60)
    model = StackedGRU(INPUT, HIDDEN, LAYERS)
    head = nn.Linear(HIDDEN, 1)
    trainer = Trainer(model, head)
    history = trainer.fit(stream, targets)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {history[-1]:.6f} param_sum {param_sum:.6f}")
