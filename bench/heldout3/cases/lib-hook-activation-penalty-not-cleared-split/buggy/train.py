"""Classifier with an L1 sparsity penalty on its hidden activations, collected by forward hooks."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

from hooks import ActivationRecorder


def build_model(n_in, n_hidden, n_out):
    return nn.Sequential(nn.Linear(n_in, n_hidden), nn.ReLU(), nn.Linear(n_hidden, n_hidden), nn.ReLU(),
                         nn.Linear(n_hidden, n_out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--l1", type=float, default=1e-3)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=32)
    args = ap.parse_args()
    torch.manual_seed(27)
    w = torch.randn(16, 4)
    model = build_model(16, 32, 4)
    recorder = ActivationRecorder(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.97)
    for step in range(args.steps):
        model.train()
        x = torch.randn(args.batch, 16)
        y = (x @ w).argmax(1)
        logits = model(x)
        ce = F.cross_entropy(logits, y)
        sparsity = sum(a.abs().mean() for a in recorder.activations())
        loss = ce + args.l1 * sparsity
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        sched.step()
        if step % 10 == 0:
            print(f"step {step} ce {ce.item():.4f} sparsity {float(sparsity):.4f}")
    model.eval()
    with torch.no_grad():
        x = torch.randn(256, 16)
        acc = (model(x).argmax(1) == (x @ w).argmax(1)).float().mean().item()
    recorder.remove()
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"ce {ce.item():.4f} acc {acc:.3f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
