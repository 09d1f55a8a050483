import torch

from .penalty import gradient_penalty


def train(G, C, sampler, cfg):
    opt_g = torch.optim.Adam(G.parameters(), lr=cfg["lr"], betas=(0.5, 0.9))
    opt_c = torch.optim.Adam(C.parameters(), lr=cfg["lr"], betas=(0.5, 0.9))
    for it in range(cfg["iters"]):
        for _ in range(cfg["n_critic"]):
            real = sampler(cfg["batch"])
            fake = G(torch.randn(cfg["batch"], cfg["nz"])).detach()
            opt_c.zero_grad()
            c_loss = C(fake).mean() - C(real).mean() + cfg["lambda_gp"] * gradient_penalty(C, real, fake)
            c_loss.backward()
            opt_c.step()
        opt_g.zero_grad()
        g_loss = -C(G(torch.randn(cfg["batch"], cfg["nz"]))).mean()
        g_loss.backward()
        opt_g.step()
        if it % cfg["log_every"] == 0:
            print(f"iter {it} critic {c_loss.item():.4f} gen {g_loss.item():.4f}")
    return c_loss.item(), g_loss.item()
