import torch


def grad_norm(loss, model):
    """Global L2 norm of d(loss)/d(parameters), for logging; leaves .grad cleared."""
    model.zero_grad()
    loss.backward(retain_graph=True)
    norms = [p.grad.norm() for p in model.parameters() if p.grad is not None]
    total = torch.norm(torch.stack(norms)).item()
    model.zero_grad()
    return total


def rmse(pred, target):
    return torch.sqrt(torch.mean((pred - target) ** 2)).item()
