import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
opt_g = torch.optim.RMSprop(G.parameters(), lr=5e-5)
for step in range(100):
    real = torch.randn(64, 2)
    fake = G(torch.randn(64, 2))
    d_out = D(fake)
    d_loss = d_out.mean() - D(real).mean()
    d_loss.backward(retain_graph=True)
    # manual SGD for the critic, then weight clipping
    with torch.no_grad():
        for p in D.parameters():
            p.sub_(5e-5 * p.grad)
            p.clamp_(-0.01, 0.01)
    D.zero_grad()
    g_loss = -d_out.mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
