import math

import torch

from signal_model import LearnedFourierRegressor
from trainer import Trainer

N_POINTS = 24
STEPS = 30


def make_batch(n=32):
    amp = torch.rand(n, 3) * 2 - 1
    t = torch.linspace(0, 2 * math.pi, N_POINTS)
    y = amp[:, :1] * torch.cos(1.3 * t) + amp[:, 1:2] * torch.cos(2.7 * t) + 0.3 * amp[:, 2:]
    return amp, y


if __name__ == "__main__":
    torch.manual_seed(44)
    trainer = Trainer(LearnedFourierRegressor(3))
    last = trainer.fit(make_batch, STEPS, N_POINTS)
    val = trainer.validate(make_batch, N_POINTS)
    param_sum = sum(p.sum().item() for p in trainer.model.parameters())
    print(f"loss {last:.4f} val {val:.4f} param_sum {param_sum:.4f}")
