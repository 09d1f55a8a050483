import math
import torch
import torch.nn as nn

from .data import get_batch

criterion = nn.CrossEntropyLoss()


def train_epoch(model, train_data, optimizer, bsz, bptt, clip=0.25, log_interval=5):
    model.train()
    model.init_hidden(bsz)
    total = 0.0
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i, bptt)
        optimizer.zero_grad()
        model.detach_hidden()
        output = model(data)
        loss = criterion(output.view(-1, output.size(-1)), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        total += loss.item()
        if batch % log_interval == 0 and batch > 0:
            print(f"  batch {batch:3d} | loss {total / log_interval:.3f} | ppl {math.exp(total / log_interval):.2f}")
            total = 0.0


@torch.no_grad()
def evaluate(model, data_source, bsz, bptt):
    model.eval()
    model.init_hidden(bsz)
    total, n = 0.0, 0
    for i in range(0, data_source.size(0) - 1, bptt):
        data, targets = get_batch(data_source, i, bptt)
        output = model(data)
        total += len(data) * criterion(output.view(-1, output.size(-1)), targets).item()
        n += len(data)
    return total / n
