"""The flow wrapper and its fit loop (the shape of torchflows' normalizing_flows/flows.py)."""

import math

import torch
from torch import nn


class Flow(nn.Module):
    def __init__(self, bijection):
        super().__init__()
        self.bijection = bijection

    def log_prob(self, x):
        z, logdet = self.bijection(x)
        return -0.5 * (z ** 2).sum(dim=1) - 0.5 * z.shape[1] * math.log(2 * math.pi) + logdet

    def fit(self, x_train, n_epochs=3, batch_size=32, lr=0.05):
        optimizer = torch.optim.AdamW(self.parameters(), lr=lr)
        for epoch in range(n_epochs):
            for batch in x_train.split(batch_size):
                optimizer.zero_grad()
                train_loss = -self.log_prob(batch).mean()
                train_loss.backward()
                optimizer.step()
