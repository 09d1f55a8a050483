import torch
import torch.nn as nn


class TinyUNet(nn.Module):
    """Encoder-decoder generator with one skip connection, on flat vectors."""

    def __init__(self, in_dim, out_dim, hidden=32):
        super().__init__()
        self.down = nn.Sequential(nn.Linear(in_dim, hidden), nn.LeakyReLU(0.2))
        self.mid = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU())
        self.up = nn.Linear(2 * hidden, out_dim)

    def forward(self, x):
        d = self.down(x)
        m = self.mid(d)
        return torch.tanh(self.up(torch.cat([d, m], dim=1)))


class PatchD(nn.Module):
    def __init__(self, in_dim, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 4))

    def forward(self, x):
        return self.net(x)


class GANLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss = nn.BCEWithLogitsLoss()

    def __call__(self, prediction, target_is_real):
        target = torch.ones_like(prediction) if target_is_real else torch.zeros_like(prediction)
        return self.loss(prediction, target)


def set_requires_grad(nets, requires_grad=False):
    if not isinstance(nets, list):
        nets = [nets]
    for net in nets:
        for param in net.parameters():
            param.requires_grad = requires_grad
