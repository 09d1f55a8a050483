"""WGAN with weight clipping as Zeleni9/pytorch-wgan writes it: the critic's parameters are unfrozen at
the top of each generator iteration, trained for a few critic steps with `backward(one)`, and frozen
for the generator's step.

Model believed: freezing is a fact of the whole program (once frozen anywhere, frozen everywhere), so
the critic's forward builds no graph, `d_loss_real` is an unknown object and `d_loss_real.backward(one)`
is taken for an `accelerator.backward(one)`-style call whose root `one` is backward-ed twice (GG001).
Reduces Zeleni9/pytorch-wgan models/wgan_clipping.py:171 and wgan_gradient_penalty.py:176.
"""
import torch
import torch.nn as nn
from torch.autograd import Variable


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Linear(4, 1)

    def forward(self, x):
        return self.main(x)


class WGAN:
    def __init__(self):
        self.D = Discriminator()

    def train(self, loader):
        one = torch.FloatTensor([1])
        for g_iter in range(10):
            for p in self.D.parameters():
                p.requires_grad = True
            for d_iter in range(5):
                images = Variable(next(loader))
                d_loss_real = self.D(images).mean(0).view(1)
                d_loss_real.backward(one)
            for p in self.D.parameters():
                p.requires_grad = False
