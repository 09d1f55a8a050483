"""Character-level GRU over a long text, chunk by chunk, with the state carried across chunks."""
import torch
import torch.nn as nn

from charmodel import CharGRU
from helpers import train_batch

TEXT = ("to be or not to be that is the question whether tis nobler in the mind to suffer "
        "the slings and arrows of outrageous fortune ") * 4
CHUNK = 20
BATCH = 4


def make_stream(text):
    vocab = sorted(set(text))
    ids = torch.tensor([vocab.index(c) for c in text])
    n = (len(ids) - 1) // BATCH
    x = ids[: n * BATCH].view(BATCH, n)
    y = ids[1: n * BATCH + 1].view(BATCH, n)
    return vocab, x, y


@torch.no_grad()
def sample(model, vocab, start="t", length=20):
    model.eval()
    idx = torch.tensor([[vocab.index(start)]])
    hidden, out = None, [start]
    for _ in range(length):
        logits, hidden = model(idx, hidden)
        idx = logits[:, -1].argmax(-1, keepdim=True)
        out.append(vocab[idx.item()])
    return "".join(out)


def main():
    torch.manual_seed(0)
    vocab, x, y = make_stream(TEXT)
    model = CharGRU(len(vocab))
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(2):
        hidden = None
        for start in range(0, x.size(1) - CHUNK + 1, CHUNK):
            xb, yb = x[:, start:start + CHUNK], y[:, start:start + CHUNK]
            loss, hidden = train_batch(model, xb, yb, hidden, optimizer, criterion)
    text = sample(model, vocab)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {loss:.6f} sample {text.replace(' ', '_')} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
