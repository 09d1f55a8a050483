"""Sequence classification (does the sequence contain a repeated token?) with relative position bias."""
import torch
import torch.nn.functional as F

from layers import Encoder

VOCAB, SEQ = 16, 10


def make_batch(batch_size):
    tokens = torch.randint(0, VOCAB, (batch_size, SEQ))
    has_repeat = torch.tensor([len(set(row.tolist())) < SEQ for row in tokens]).long()
    return tokens, has_repeat


def train(model, optimizer, steps=20, batch_size=32):
    model.train()
    for step in range(steps):
        tokens, labels = make_batch(batch_size)
        logits = model(tokens)
        loss = F.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


@torch.no_grad()
def evaluate(model, n=128):
    model.eval()
    tokens, labels = make_batch(n)
    return (model(tokens).argmax(1) == labels).float().mean().item()


def main():
    torch.manual_seed(0)
    model = Encoder(VOCAB)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    loss = train(model, optimizer)
    acc = evaluate(model)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {loss:.6f} acc {acc:.4f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
