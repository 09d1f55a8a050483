import torch
import torch.nn.functional as F

from .attacks import fgsm


def train_epoch(model, loader, optimizer, eps, adv_weight=0.5):
    model.train()
    stats = {"clean": 0.0, "adv": 0.0}
    for x, y in loader:
        x = x.clone().requires_grad_(True)
        logits = model(x)
        loss_clean = F.cross_entropy(logits, y)
        x_adv = fgsm(x, loss_clean, eps)
        loss_adv = F.cross_entropy(model(x_adv), y)
        loss = (1 - adv_weight) * loss_clean + adv_weight * loss_adv
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        stats["clean"] += loss_clean.item() / len(loader)
        stats["adv"] += loss_adv.item() / len(loader)
    return stats


def evaluate(model, x, y, eps):
    model.eval()
    x = x.clone().requires_grad_(True)
    logits = model(x)
    x_adv = fgsm(x, F.cross_entropy(logits, y), eps)
    with torch.no_grad():
        clean_acc = (logits.argmax(1) == y).float().mean().item()
        adv_acc = (model(x_adv).argmax(1) == y).float().mean().item()
    return clean_acc, adv_acc
