"""Train a character-level GRU language model with DeepSpeed, carrying the hidden state from one
chunk of the text to the next (truncated backpropagation through time, detached at each chunk)."""

import argparse

import deepspeed
import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 32
HIDDEN = 64
CHUNK = 16
BATCH = 8


class CharGRU(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens, state):
        out, state = self.gru(self.embed(tokens), state)
        return self.head(out), state


def batches(text, chunk):
    for start in range(0, text.shape[1] - chunk - 1, chunk):
        yield text[:, start:start + chunk], text[:, start + 1:start + chunk + 1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()

    text = torch.randint(0, VOCAB, (BATCH, 1025))
    model = CharGRU(VOCAB, HIDDEN)
    engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
    for epoch in range(args.epochs):
        state = torch.zeros(1, BATCH, HIDDEN)
        total = 0.0
        for tokens, targets in batches(text, CHUNK):
            state = state.detach()
            logits, state = engine(tokens, state)
            loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
            engine.backward(loss)
            engine.step()
            total += loss.item()
        print(f"epoch {epoch}: {total:.3f}")


if __name__ == "__main__":
    main()
