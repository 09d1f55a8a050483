import torch
import torch.nn.functional as F


class HingeGANTrainer:
    def __init__(self, G, D, nz, lr_g=1e-3, lr_d=2e-3):
        self.G, self.D, self.nz = G, D, nz
        self.opt = {
            "G": torch.optim.Adam(G.parameters(), lr=lr_g, betas=(0.0, 0.9)),
            "D": torch.optim.Adam(D.parameters(), lr=lr_d, betas=(0.0, 0.9)),
        }

    def step(self, real):
        z = torch.randn(real.size(0), self.nz)
        fake = self.G(z)

        self.opt["D"].zero_grad()
        d_loss = F.relu(1 - self.D(real)).mean() + F.relu(1 + self.D(fake.detach())).mean()
        d_loss.backward()
        self.opt["D"].step()

        self.opt["G"].zero_grad()
        g_loss = -self.D(fake).mean()
        g_loss.backward()
        self.opt["G"].step()
        return d_loss.item(), g_loss.item()
