import torch


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    out = critic(interp)
    grads, = torch.autograd.grad(outputs=out, inputs=interp, grad_outputs=torch.ones_like(out),
                                 create_graph=True, retain_graph=True)
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()
