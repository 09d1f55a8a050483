import torch


def fgsm(x, loss, eps):
    """One signed-gradient step on the input that increases `loss`."""
    (grad,) = torch.autograd.grad(loss, x, retain_graph=True)
    return (x + eps * grad.sign()).detach()
