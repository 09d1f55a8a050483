import argparse

import torch

from charlm import CharLSTM, fit

TEXT = "the quick brown fox jumps over the lazy dog while the cat sleeps in the warm sun " * 6


def encode(text):
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    return torch.tensor([stoi[c] for c in text]), len(chars)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--seq-len", type=int, default=10)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=2)
    args = ap.parse_args()
    torch.manual_seed(5)
    data, vocab = encode(TEXT)
    n = data.numel() // args.batch
    stream = data[: n * args.batch].view(args.batch, n)
    model = CharLSTM(vocab)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    avg = fit(model, stream, optimizer, args.seq_len, args.epochs)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"avg loss {avg:.4f} param_sum {param_sum:.4f}")
