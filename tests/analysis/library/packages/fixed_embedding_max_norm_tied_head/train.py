"""Train the tied language model on pairs of sequences, each read left to right and right to left
(the same model scores both directions in one loss)."""

import torch
import torch.nn.functional as F

from model import TinyLM

VOCAB = 24
DIM = 16
CONTEXT = 8
BATCH = 4
STEPS = 4


def batches():
    for _ in range(STEPS):
        start = torch.randint(0, VOCAB, (BATCH, 1))
        yield (start + torch.arange(CONTEXT + 1)) % VOCAB


def train(model, loader, optimizer):
    for tokens in loader:
        with torch.no_grad():
            model.wte.weight.renorm_(2, 0, 1.0)
        forward, backward = tokens, tokens.flip(1)
        loss = F.cross_entropy(model(forward[:, :-1]).flatten(0, 1), forward[:, 1:].flatten()) \
            + F.cross_entropy(model(backward[:, :-1]).flatten(0, 1), backward[:, 1:].flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"loss {loss.item():.4f}")


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyLM(VOCAB, DIM, CONTEXT)
    train(model, batches(), torch.optim.AdamW(model.parameters(), lr=3e-3))
