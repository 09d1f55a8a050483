"""GAN painting curves; the generator loss is recomputed after the discriminator update."""
import torch
import torch.nn as nn

torch.manual_seed(0)

BATCH, N_IDEAS, ART = 64, 5, 15
points = torch.linspace(-1, 1, ART).repeat(BATCH, 1)


def artist_works():
    a = torch.rand(BATCH, 1) + 1
    return a * points.pow(2) + (a - 1)


G = nn.Sequential(nn.Linear(N_IDEAS, 128), nn.ReLU(), nn.Linear(128, ART))
D = nn.Sequential(nn.Linear(ART, 128), nn.ReLU(), nn.Linear(128, 1), nn.Sigmoid())
opt_D = torch.optim.Adam(D.parameters(), lr=1e-4)
opt_G = torch.optim.Adam(G.parameters(), lr=1e-4)

for step in range(30):
    artist_paintings = artist_works()
    G_paintings = G(torch.randn(BATCH, N_IDEAS))

    prob_artist0 = D(artist_paintings)
    prob_artist1 = D(G_paintings.detach())
    D_loss = -torch.mean(torch.log(prob_artist0) + torch.log(1. - prob_artist1))
    opt_D.zero_grad()
    D_loss.backward()
    opt_D.step()

    prob_artist1 = D(G_paintings)
    G_loss = torch.mean(torch.log(1. - prob_artist1))
    opt_G.zero_grad()
    G_loss.backward()
    opt_G.step()

with torch.no_grad():
    sample = G(torch.randn(BATCH, N_IDEAS))
    curvature = (sample[:, 0] + sample[:, -1] - 2 * sample[:, ART // 2]).mean().item()

param_sum = sum(p.sum().item() for p in G.parameters())
print(f"final D_loss {D_loss.item():.6f} G_loss {G_loss.item():.6f} curvature {curvature:.6f} "
      f"param_sum {param_sum:.6f}")
