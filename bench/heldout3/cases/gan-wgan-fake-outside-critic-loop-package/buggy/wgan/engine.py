import torch


def critic_step(critic, opt_c, real, fake, clip_value):
    opt_c.zero_grad()
    loss_c = -(critic(real).mean() - critic(fake).mean())
    loss_c.backward()
    opt_c.step()
    for p in critic.parameters():
        p.data.clamp_(-clip_value, clip_value)
    return loss_c.item()


def fit(gen, critic, sample_real, cfg):
    opt_g = torch.optim.RMSprop(gen.parameters(), lr=cfg["lr"])
    opt_c = torch.optim.RMSprop(critic.parameters(), lr=cfg["lr"])
    hist = []
    for it in range(cfg["iterations"]):
        z = torch.randn(cfg["batch"], cfg["z_dim"])
        fake = gen(z)
        for _ in range(cfg["n_critic"]):
            real = sample_real(cfg["batch"])
            loss_c = critic_step(critic, opt_c, real, fake, cfg["clip"])
        opt_g.zero_grad()
        loss_g = -critic(gen(torch.randn(cfg["batch"], cfg["z_dim"]))).mean()
        loss_g.backward()
        opt_g.step()
        hist.append((loss_c, loss_g.item()))
        if it % cfg["log_every"] == 0:
            print(f"iter {it:3d} critic {loss_c:.4f} gen {loss_g.item():.4f}")
    return hist
