"""The epoch loop (the shape of MAE-DFER's engine_for_finetuning.train_one_epoch)."""

import torch


def train_one_epoch(model, criterion, optimizer, loss_scaler, steps=2):
    for _ in range(steps):
        samples = torch.randn(2, 12, 8)
        targets = torch.randint(0, 3, (2,))
        loss = criterion(model(samples), targets)
        optimizer.zero_grad()
        loss_scaler(loss, optimizer, parameters=model.parameters())
