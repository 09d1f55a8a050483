import argparse

import torch

from fitter import CurveFitter
from oscillator import DampedOscillator

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="estimate damping and frequency from a noisy trace")
    ap.add_argument("--n", type=int, default=80)
    ap.add_argument("--noise", type=float, default=0.02)
    ap.add_argument("--outer", type=int, default=4)
    args = ap.parse_args()
    torch.manual_seed(81)
    t = torch.linspace(0, 6, args.n)
    truth = 1.3 * torch.exp(-0.25 * t) * torch.cos(2.2 * t + 0.4)
    x_obs = truth + args.noise * torch.randn(args.n)
    model = DampedOscillator()
    fitter = CurveFitter(model, weight_decay=1e-5)
    final = fitter.fit(t, x_obs, outer_steps=args.outer)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"loss {final:.6f} omega {model.omega.item():.4f} param_sum {param_sum:.4f}")
