"""Unpaired translation between two 2-D domains with cycle consistency."""
import itertools

import torch
import torch.nn as nn

from networks import GANLoss, define_D, define_G

opt = {"dim": 2, "batch": 16, "n_iters": 20, "lambda_cyc": 10.0, "lr": 2e-3, "print_freq": 5}


def domain_a(n):
    return torch.randn(n, 2) * 0.3 + torch.tensor([1.0, 0.0])


def domain_b(n):
    return torch.randn(n, 2) * 0.3 + torch.tensor([0.0, 2.0])


def train(G, D, criterionGAN, optimizer_G, optimizer_D, opt):
    cycle = nn.L1Loss()
    for it in range(opt["n_iters"]):
        real = {"A": domain_a(opt["batch"]), "B": domain_b(opt["batch"])}
        fake = {"B": G["AB"](real["A"]), "A": G["BA"](real["B"])}
        rec_A, rec_B = G["BA"](fake["B"]), G["AB"](fake["A"])

        # generators first
        optimizer_G.zero_grad()
        loss_G = (criterionGAN(D["B"](fake["B"]), True) + criterionGAN(D["A"](fake["A"]), True)
                  + opt["lambda_cyc"] * (cycle(rec_A, real["A"]) + cycle(rec_B, real["B"])))
        loss_G.backward()
        optimizer_G.step()

        # then each discriminator on real vs generated samples
        optimizer_D.zero_grad()
        losses_D = {}
        for name, netD in D.items():
            loss_D = 0.5 * (criterionGAN(netD(real[name]), True) + criterionGAN(netD(fake[name].detach()), False))
            loss_D.backward()
            losses_D[name] = loss_D.item()
        optimizer_D.step()
        if it % opt["print_freq"] == 0:
            print(f"iter {it} G {loss_G.item():.4f} D_A {losses_D['A']:.4f} D_B {losses_D['B']:.4f}")
    return loss_G.item(), losses_D


if __name__ == "__main__":
    torch.manual_seed(5)
    G = {"AB": define_G(opt["dim"]), "BA": define_G(opt["dim"])}
    D = {"A": define_D(opt["dim"]), "B": define_D(opt["dim"])}
    criterionGAN = GANLoss()
    optimizer_G = torch.optim.Adam(itertools.chain(G["AB"].parameters(), G["BA"].parameters()), lr=opt["lr"])
    optimizer_D = torch.optim.Adam(itertools.chain(D["A"].parameters(), D["B"].parameters()), lr=opt["lr"])
    loss_G, losses_D = train(G, D, criterionGAN, optimizer_G, optimizer_D, opt)
    with torch.no_grad():
        moved = G["AB"](domain_a(100)).mean(0)
    param_sum = sum(p.sum().item() for m in list(G.values()) + list(D.values()) for p in m.parameters())
    print(f"G {loss_G:.4f} D_A {losses_D['A']:.4f} mean_AB {moved[1].item():.4f} param_sum {param_sum:.4f}")
