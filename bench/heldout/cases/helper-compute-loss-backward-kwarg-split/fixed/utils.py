import torch


def compute_loss(model, batch, criterion, backward=True):
    """Forward pass and loss; runs the backward pass too unless told otherwise."""
    inputs, targets = batch
    outputs = model(inputs)
    loss = criterion(outputs, targets)
    if backward:
        loss.backward()
    return loss


def accuracy(model, x, y):
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()
