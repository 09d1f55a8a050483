"""A sequence model trained stateless by default; `main_stateful` (run by the console script
`seq-stateful`) carries the hidden state across batches (truncated BPTT, but forgets to detach)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def batches(n):
    return [(torch.randn(16, 10, 4), torch.randn(16, 1)) for _ in range(n)]


def train(rnn, head, data, stateful):
    opt = torch.optim.Adam([*rnn.parameters(), *head.parameters()], lr=1e-3)
    h = None
    for x, y in data:
        if not stateful:
            h = None
        out, h = rnn(x, h)
        loss = F.mse_loss(head(out[:, -1]), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


def main_stateful():
    print(train(nn.GRU(4, 8, batch_first=True), nn.Linear(8, 1), batches(20), stateful=True))


if __name__ == "__main__":
    print(train(nn.GRU(4, 8, batch_first=True), nn.Linear(8, 1), batches(20), stateful=False))
