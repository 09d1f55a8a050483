import torch

from .model import simsiam_loss


def augment(x):
    mask = (torch.rand_like(x) > 0.15).float()
    return x * mask + 0.1 * torch.randn_like(x)


def pretrain(model, data, optimizer, epochs, batch_size=64):
    model.train()
    losses = []
    for epoch in range(epochs):
        perm = torch.randperm(data.size(0))
        for i in range(0, data.size(0), batch_size):
            x = data[perm[i:i + batch_size]]
            loss = simsiam_loss(*model(augment(x), augment(x)))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
