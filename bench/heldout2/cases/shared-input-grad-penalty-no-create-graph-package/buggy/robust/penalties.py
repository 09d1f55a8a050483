import torch


def input_gradient_penalty(loss, x):
    """Squared norm of d(loss)/d(input), averaged over the batch (input gradient regularisation)."""
    (grad_x,) = torch.autograd.grad(loss, x)
    return grad_x.pow(2).sum(dim=1).mean() * x.size(0)
