"""Compare supervised, pseudo-label and consistency training on a toy semi-supervised problem."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_model():
    return nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 2))


def data(g):
    x = torch.randn(200, 2, generator=g)
    y = (x[:, 0] * x[:, 1] > 0).long()
    return x[:20], y[:20], x[20:], y[20:]


def train(mode, xl, yl, xu, args):
    model = make_model()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    for step in range(args.steps):
        logits_l = model(xl)
        sup = F.cross_entropy(logits_l, yl)
        opt.zero_grad()
        if args.mode_override == "none" and mode == "supervised":
            sup.backward()
        elif mode == "pseudo":
            with torch.no_grad():
                probs = model(xu).softmax(1)
                conf, pseudo = probs.max(1)
                mask = (conf > args.threshold).float()
            unsup = (F.cross_entropy(model(xu), pseudo, reduction="none") * mask).mean()
            loss = sup + args.lambda_u * unsup
            loss.backward()
        elif mode == "consistency":
            noisy = model(xu + 0.1 * torch.randn_like(xu))
            with torch.no_grad():
                target = model(xu).softmax(1)
            loss = sup + args.lambda_u * F.kl_div(noisy.log_softmax(1), target, reduction="batchmean")
            loss.backward()
        else:
            sup.backward()
        opt.step()
    return model, sup.item()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--modes", nargs="+", default=["supervised", "pseudo", "consistency"])
    ap.add_argument("--mode-override", default="none")
    ap.add_argument("--steps", type=int, default=25)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("--lambda-u", type=float, default=0.5)
    args = ap.parse_args()
    torch.manual_seed(18)
    g = torch.Generator().manual_seed(18)
    xl, yl, xu, yu = data(g)
    results = {}
    for mode in args.modes:
        model, sup = train(mode, xl, yl, xu, args)
        with torch.no_grad():
            acc = (model(xu).argmax(1) == yu).float().mean().item()
        results[mode] = (sup, acc, sum(p.sum().item() for p in model.parameters()))
        print(f"{mode:12s} sup {sup:.4f} acc {acc:.3f}")
    param_sum = sum(r[2] for r in results.values())
    print(" ".join(f"{m} {r[1]:.3f}" for m, r in results.items()) + f" param_sum {param_sum:.4f}")
