import torch


def backward_and_step(loss, optimizer, parameters=None, max_norm=None):
    """zero_grad, backward, optional clipping, step."""
    optimizer.zero_grad()
    loss.backward()
    if max_norm is not None:
        torch.nn.utils.clip_grad_norm_(parameters, max_norm)
    optimizer.step()
    return loss.item()
