import torch.nn as nn


def weights_init(m):
    if isinstance(m, nn.Linear):
        nn.init.normal_(m.weight, 0.0, 0.05)
        nn.init.zeros_(m.bias)


class Generator(nn.Module):
    def __init__(self, nz=8, ngf=32, out_dim=2):
        super().__init__()
        self.main = nn.Sequential(
            nn.Linear(nz, ngf), nn.BatchNorm1d(ngf), nn.ReLU(True),
            nn.Linear(ngf, ngf), nn.ReLU(True),
            nn.Linear(ngf, out_dim),
        )

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self, in_dim=2, ndf=32):
        super().__init__()
        self.main = nn.Sequential(
            nn.Linear(in_dim, ndf), nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(ndf, ndf), nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(ndf, 1),
        )

    def forward(self, x):
        return self.main(x).view(-1)
