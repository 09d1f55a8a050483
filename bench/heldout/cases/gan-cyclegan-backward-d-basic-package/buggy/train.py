"""Unpaired translation between two synthetic domains with a CycleGAN-style model."""
import random

import torch

from cyclegan import CycleGANModel

DIM = 10
BATCH = 8


def domain_batches(n_batches):
    rot = torch.linalg.qr(torch.randn(DIM, DIM))[0]
    for _ in range(n_batches):
        a = torch.tanh(torch.randn(BATCH, DIM))
        b = torch.tanh(torch.randn(BATCH, DIM) @ rot)
        yield a, b


@torch.no_grad()
def cycle_error(model, n_batches=2):
    errors = []
    for real_A, real_B in domain_batches(n_batches):
        rec_A = model.netG_B(model.netG_A(real_A))
        rec_B = model.netG_A(model.netG_B(real_B))
        errors.append(((rec_A - real_A).abs().mean() + (rec_B - real_B).abs().mean()).item())
    return sum(errors) / len(errors)


def main():
    random.seed(0)
    torch.manual_seed(0)
    model = CycleGANModel(DIM)
    for epoch in range(2):
        for real_A, real_B in domain_batches(10):
            model.set_input(real_A, real_B)
            model.optimize_parameters()
    g_sum = sum(p.sum().item() for p in model.netG_A.parameters())
    print(f"final loss_G {model.loss_G.item():.6f} loss_D_A {model.loss_D_A.item():.6f} "
          f"cycle {cycle_error(model):.6f} param_sum {g_sum:.6f}")


if __name__ == "__main__":
    main()
