"""A regression network with a learned-free normalisation layer: activations are divided by a
running estimate of their mean magnitude, kept as a buffer and updated in place during training
once the batch is scaled, as batch norm keeps its running statistics."""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

DIM_IN = 8
HIDDEN = 24
BATCH = 32
EPOCHS = 2
STEPS_PER_EPOCH = 4


class RunningScale(nn.Module):
    def __init__(self, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum = momentum
        self.eps = eps
        self.register_buffer("running_scale", torch.ones(1))

    def forward(self, x):
        out = x / self.running_scale.clone()
        if self.training:
            self.running_scale.mul_(1 - self.momentum).add_(self.momentum * x.detach().abs().mean())
        return out


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(DIM_IN, HIDDEN)
        self.scale = RunningScale()
        self.fc2 = nn.Linear(HIDDEN, 1)

    def forward(self, x):
        return self.fc2(F.gelu(self.scale(self.fc1(x)))).squeeze(1)


def batches():
    for _ in range(STEPS_PER_EPOCH):
        x = torch.randn(BATCH, DIM_IN)
        yield x, x[:, 0] * 2.0 - x[:, 1] + 0.1 * torch.randn(BATCH)


model = Regressor()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

for epoch in range(EPOCHS):
    model.train()
    for x, y in batches():
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        x, y = next(batches())
        print(f"epoch {epoch}: eval loss {F.mse_loss(model(x), y).item():.4f}, "
              f"scale {model.scale.running_scale.item():.4f}")
