import torch


def layer_grad_norms(loss, named_parameters):
    """Per-parameter gradient norms of `loss`, without touching .grad."""
    names, params = zip(*[(n, p) for n, p in named_parameters if p.requires_grad])
    grads = torch.autograd.grad(loss, params, retain_graph=True, allow_unused=True)
    return {n: (g.norm().item() if g is not None else 0.0) for n, g in zip(names, grads)}
