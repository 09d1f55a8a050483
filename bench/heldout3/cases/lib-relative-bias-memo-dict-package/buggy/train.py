import argparse

import torch
import torch.nn.functional as F

from tinyformer import SeqClassifier


def batch(n, length, vocab, g):
    """Label: does token 1 appear before token 2?"""
    tok = torch.randint(3, vocab, (n, length), generator=g)
    i = torch.randint(length, (n,), generator=g)
    j = torch.randint(length, (n,), generator=g)
    tok[torch.arange(n), i] = 1
    tok[torch.arange(n), j] = 2
    return tok, (i < j).long()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=25)
    ap.add_argument("--seq-len", type=int, default=12)
    ap.add_argument("--vocab", type=int, default=10)
    args = ap.parse_args()
    torch.manual_seed(33)
    g = torch.Generator().manual_seed(33)
    model = SeqClassifier(args.vocab)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    warmup = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 5))
    for step in range(args.steps):
        model.train()
        x, y = batch(32, args.seq_len, args.vocab, g)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        warmup.step()
        if step % 5 == 0:
            print(f"step {step} loss {loss.item():.4f}")
    model.eval()
    with torch.no_grad():
        x, y = batch(256, args.seq_len, args.vocab, g)
        acc = (model(x).argmax(1) == y).float().mean().item()
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"loss {loss.item():.4f} acc {acc:.3f} param_sum {param_sum:.4f}")
