"""GAN on a 2-D ring of Gaussians; the generator is trained with feature matching (Salimans et al.)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
Z_DIM = 4
FM_WEIGHT = 1.0


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32), nn.LeakyReLU(0.2))
        self.head = nn.Linear(32, 1)

    def forward(self, x):
        feat = self.body(x)
        return self.head(feat).squeeze(-1), feat


def sample_ring(n, modes=6, radius=2.0):
    k = torch.randint(0, modes, (n,)).float()
    angle = 2 * math.pi * k / modes
    centers = torch.stack([torch.cos(angle), torch.sin(angle)], dim=-1) * radius
    return centers + 0.1 * torch.randn(n, 2)


torch.manual_seed(6)
G = nn.Sequential(nn.Linear(Z_DIM, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 2))
D = Discriminator()
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.5, 0.999))

for it in range(150):
    real = sample_ring(BATCH)
    fake = G(torch.randn(BATCH, Z_DIM))

    real_logit, real_feat = D(real)
    fake_logit, _ = D(fake.detach())
    loss_d = (F.binary_cross_entropy_with_logits(real_logit, torch.ones(BATCH))
              + F.binary_cross_entropy_with_logits(fake_logit, torch.zeros(BATCH)))
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()

    gen_logit, fake_feat = D(fake)
    loss_fm = F.mse_loss(fake_feat.mean(0), real_feat.mean(0))
    loss_g = F.binary_cross_entropy_with_logits(gen_logit, torch.ones(BATCH)) + FM_WEIGHT * loss_fm
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    if it % 50 == 0:
        print(f"it {it} loss_D {loss_d.item():.4f} loss_G {loss_g.item():.4f}")

with torch.no_grad():
    radius = G(torch.randn(512, Z_DIM)).norm(dim=-1).mean().item()
param_sum = sum(p.sum().item() for p in list(G.parameters()) + list(D.parameters()))
print(f"final loss_D {loss_d.item():.4f} fm {loss_fm.item():.4f} radius {radius:.4f} param_sum {param_sum:.4f}")
