"""LSTM language model; utils.repackage_hidden detaches the state between BPTT segments."""
import torch
import torch.nn as nn

from model import RNNModel
from utils import batchify, get_batch, repackage_hidden

NTOKENS = 40
BPTT = 10
BATCH = 4


def train(model, train_data, criterion, lr, clip=0.25):
    model.train()
    total_loss = 0.0
    hidden = model.init_hidden(BATCH)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, BPTT)):
        data, targets = get_batch(train_data, i, BPTT)
        model.zero_grad()
        repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output.view(-1, NTOKENS), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        total_loss += loss.item()
    return total_loss / (batch + 1)


def evaluate(model, data_source, criterion):
    model.eval()
    total_loss = 0.0
    hidden = model.init_hidden(BATCH)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, BPTT):
            data, targets = get_batch(data_source, i, BPTT)
            output, hidden = model(data, hidden)
            hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output.view(-1, NTOKENS), targets).item()
    return total_loss / (len(data_source) - 1)


def main():
    torch.manual_seed(0)
    corpus = torch.randint(0, NTOKENS, (480,))
    train_data, val_data = batchify(corpus[:400], BATCH), batchify(corpus[400:], BATCH)
    model = RNNModel(NTOKENS)
    criterion = nn.CrossEntropyLoss()
    lr = 5.0
    for epoch in range(2):
        train_loss = train(model, train_data, criterion, lr)
        val_loss = evaluate(model, val_data, criterion)
        lr /= 2.0
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {train_loss:.6f} val {val_loss:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
