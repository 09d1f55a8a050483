"""Least-squares GAN with a small trainer class holding both networks and optimizers."""
import torch
import torch.nn as nn


def mlp(sizes, out_act=None):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.LeakyReLU(0.2))
    if out_act is not None:
        layers.append(out_act)
    return nn.Sequential(*layers)


class GANTrainer:
    def __init__(self, nz=6, dim=10, lr=1e-3):
        self.nz = nz
        self.G = mlp([nz, 32, 32, dim], nn.Tanh())
        self.D = mlp([dim, 32, 32, 1])
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=lr, betas=(0.5, 0.99))
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=lr, betas=(0.5, 0.99))
        self.mse = nn.MSELoss()
        self.fake = None

    def _update_d(self, real):
        self.opt_d.zero_grad()
        pred_real = self.D(real)
        pred_fake = self.D(self.fake)
        loss_d = 0.5 * (self.mse(pred_real, torch.ones_like(pred_real))
                        + self.mse(pred_fake, torch.zeros_like(pred_fake)))
        loss_d.backward()
        self.opt_d.step()
        return loss_d.item()

    def _update_g(self):
        self.opt_g.zero_grad()
        pred_fake = self.D(self.fake)
        loss_g = 0.5 * self.mse(pred_fake, torch.ones_like(pred_fake))
        loss_g.backward()
        self.opt_g.step()
        return loss_g.item()

    def step(self, real):
        z = torch.randn(real.size(0), self.nz)
        self.fake = self.G(z)
        return self._update_d(real), self._update_g()


if __name__ == "__main__":
    torch.manual_seed(0)
    data = torch.tanh(torch.randn(256, 10) @ torch.randn(10, 10) * 0.5)
    trainer = GANTrainer()
    for epoch in range(2):
        for real in data.split(32):
            loss_d, loss_g = trainer.step(real)
    param_sum = sum(p.sum().item() for p in trainer.G.parameters())
    print(f"final loss_D {loss_d:.6f} loss_G {loss_g:.6f} param_sum {param_sum:.6f}")
