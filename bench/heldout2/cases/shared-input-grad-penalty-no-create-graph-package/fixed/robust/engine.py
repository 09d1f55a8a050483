import torch
import torch.nn.functional as F

from .penalties import input_gradient_penalty


def train_epoch(model, x_all, y_all, optimizer, lam, batch_size=32):
    model.train()
    perm = torch.randperm(x_all.size(0))
    total, n = 0.0, 0
    for i in range(0, x_all.size(0), batch_size):
        idx = perm[i:i + batch_size]
        x = x_all[idx].clone().requires_grad_(True)
        loss = F.cross_entropy(model(x), y_all[idx])
        penalty = input_gradient_penalty(loss, x)
        objective = loss + lam * penalty
        optimizer.zero_grad()
        objective.backward()
        optimizer.step()
        total += loss.item() * len(idx)
        n += len(idx)
    return total / n


@torch.no_grad()
def accuracy(model, x, y):
    model.eval()
    return (model(x).argmax(-1) == y).float().mean().item()
