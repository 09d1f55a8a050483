"""Logging input saliency during training: the helper keeps the graph, the loss backward follows with no step in between."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from diagnostics import format_saliency, input_saliency


class Trainer:
    def __init__(self, model, log_every=25):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        self.log_every = log_every
        self.saliency = []

    def step(self, i, x, y):
        x = x.requires_grad_(True)
        logits = self.model(x)
        loss = F.cross_entropy(logits, y)
        if i % self.log_every == 0:
            self.saliency.append(input_saliency(logits, x))
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


torch.manual_seed(97)
x_all = torch.randn(400, 4)
y_all = (x_all[:, 1] - x_all[:, 3] > 0).long()
trainer = Trainer(nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2)))
for i in range(100):
    idx = torch.randint(0, 400, (32,))
    loss = trainer.step(i, x_all[idx].clone(), y_all[idx])
print(f"saliency {format_saliency(trainer.saliency[-1])}")
param_sum = sum(p.sum().item() for p in trainer.model.parameters())
print(f"final loss {loss:.4f} param_sum {param_sum:.4f}")
