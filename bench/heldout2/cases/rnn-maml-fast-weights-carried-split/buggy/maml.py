import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call


class Regressor(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                 nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)


def adapt(model, weights, x, y, steps, lr):
    """Second-order inner loop: a few SGD steps on the support set, differentiable w.r.t. weights."""
    for _ in range(steps):
        loss = F.mse_loss(functional_call(model, weights, (x,)), y)
        grads = torch.autograd.grad(loss, list(weights.values()), create_graph=True)
        weights = {name: w - lr * g for (name, w), g in zip(weights.items(), grads)}
    return weights


def sample_task(k_shot, n_query):
    amp = torch.empty(1).uniform_(0.5, 2.0)
    phase = torch.empty(1).uniform_(0.0, math.pi)
    x = torch.empty(k_shot + n_query, 1).uniform_(-4.0, 4.0)
    y = amp * torch.sin(x + phase)
    return (x[:k_shot], y[:k_shot]), (x[k_shot:], y[k_shot:])
