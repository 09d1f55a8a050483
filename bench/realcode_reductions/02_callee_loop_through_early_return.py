"""A helper with an early return calls a decoder whose `z = layer(z)` loop chains layers.

Model believed: the decoder's loop-carried `z` outlives the call and carries the previous
training iteration's freed graph (dropping the early `return` removes the finding).
Reduces lucidrains/lightweight-gan lightweight_gan/lightweight_gan.py:1275, 1299, 1341 (GG003).
"""
import torch
from torch import nn

layers = [nn.Linear(4, 4), nn.Linear(4, 4)]
def decode(z):
    for layer in layers:
        z = layer(z)
    return z
def disc(x, aux=False):
    if not aux:
        return x.sum()
    return decode(x).pow(2).mean()
opt = torch.optim.SGD([p for layer in layers for p in layer.parameters()], lr=0.1)
for step in range(3):
    loss = disc(torch.randn(8, 4), aux=True)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("ok")
