import argparse

import torch
import torch.nn.functional as F
from torch.distributions import kl_divergence

from bayes import BayesLinear, EmpiricalBayesPrior


def train(layers, prior_module, data, optimizer, args):
    x, y = data
    prior = prior_module.distribution()
    for epoch in range(args.epochs):
        h = torch.tanh(layers[0](x))
        pred = layers[1](h).squeeze(-1)
        nll = F.gaussian_nll_loss(pred, y, torch.full_like(y, 0.05))
        kl = sum(kl_divergence(l.posterior(), prior).sum() for l in layers)
        loss = nll + kl / len(x)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if epoch % args.log_every == 0:
            print(f"epoch {epoch} nll {nll.item():.4f} kl {kl.item():.2f} prior_scale {prior_module.log_scale.exp().item():.3f}")
    return nll.item()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--log-every", type=int, default=10)
    args = ap.parse_args()
    torch.manual_seed(52)
    x = torch.linspace(-2, 2, 64)[:, None]
    y = torch.sin(2 * x).squeeze(-1) + 0.1 * torch.randn(64)
    layers = torch.nn.ModuleList([BayesLinear(1, 24), BayesLinear(24, 1)])
    prior_module = EmpiricalBayesPrior()
    optimizer = torch.optim.Adam(list(layers.parameters()) + list(prior_module.parameters()), lr=args.lr)
    nll = train(layers, prior_module, (x, y), optimizer, args)
    with torch.no_grad():
        w_mu = layers[1].w_mu
    param_sum = sum(p.sum().item() for p in list(layers.parameters()) + list(prior_module.parameters()))
    print(f"nll {nll:.4f} prior_scale {prior_module.log_scale.exp().item():.4f} param_sum {param_sum:.4f}")
