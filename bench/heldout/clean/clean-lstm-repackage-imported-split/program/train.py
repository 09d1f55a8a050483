"""LSTM language model with truncated BPTT."""
import torch
import torch.nn.functional as F

from model import LSTMLM
from utils import batchify, repackage_hidden

NTOKENS, BPTT, BATCH = 30, 8, 4


def get_batch(source, i):
    seq_len = min(BPTT, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


def train(model, data, optimizer):
    model.train()
    hidden = model.init_hidden(BATCH)
    total = 0.0
    for batch, i in enumerate(range(0, data.size(0) - 1, BPTT)):
        x, targets = get_batch(data, i)
        hidden = repackage_hidden(hidden)
        optimizer.zero_grad()
        output, hidden = model(x, hidden)
        loss = F.cross_entropy(output.view(-1, NTOKENS), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()
        total += loss.item()
    return total / (batch + 1)


def main():
    torch.manual_seed(0)
    data = batchify(torch.randint(0, NTOKENS, (320,)), BATCH)
    model = LSTMLM(NTOKENS)
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    for epoch in range(2):
        loss = train(model, data, optimizer)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {loss:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
