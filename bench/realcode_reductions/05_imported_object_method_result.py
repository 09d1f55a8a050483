"""An imported object's method takes the discriminator's output and returns a float.

Model believed: `tuner.tune(pred)` passes `pred`'s graph into its result, which then flows into
the next iteration's input (in-file, the class is read: no finding).
Reduces rosinality/stylegan2-pytorch train.py:194, 237 (via `ada_augment.tune(real_pred)`), and
:73, :216 (GG002, the same `ada_aug_p`).
"""
import torch
from torch import nn
from realcode_helpers import Tuner

disc = nn.Linear(4, 1)
opt = torch.optim.SGD(disc.parameters(), lr=0.1)
tuner = Tuner()
p = 0.0
for step in range(3):
    pred = disc(torch.randn(8, 4) * (1 + p))
    loss = pred.mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    p = tuner.tune(pred)
print("ok")
