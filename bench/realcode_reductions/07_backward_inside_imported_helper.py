"""A generator loss backward-ed with retain_graph=True, then an imported helper runs its own backward.

Model believed: no later backward uses the graph, so `retain_graph=True` is unneeded (GG009); the
helper `feature_loss(phi, backward=True)` backward-s through `phi`, the same graph (in-file: no
finding). Reduces facebookresearch/pytorch_GAN_zoo models/base_GAN.py:257 (GDPPLoss(..., backward=True)).
"""
import torch
from torch import nn
from realcode_helpers import feature_loss

gen, disc = nn.Linear(4, 4), nn.Linear(4, 4)
opt = torch.optim.SGD(gen.parameters(), lr=0.1)
for step in range(3):
    phi = disc(gen(torch.randn(8, 4)))
    loss = phi.mean()
    opt.zero_grad()
    loss.backward(retain_graph=True)
    feature_loss(phi, backward=True)
    opt.step()
print("ok")
