"""Contrastive learning with a queue of negatives (momentum contrast): the keys come from a momentum
copy of the encoder, updated and run without grad, and are written into a fixed-size queue kept as
a buffer once the step is done; the queries are scored against the key of their own view and the
queued keys."""

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

N_SAMPLES = 64
DIM_IN = 12
DIM_EMB = 8
BATCH = 16
QUEUE = 32
EPOCHS = 3
TEMPERATURE = 0.2
MOMENTUM = 0.9


def make_encoder():
    return nn.Sequential(nn.Linear(DIM_IN, 32), nn.ReLU(), nn.Linear(32, DIM_EMB))


class MomentumContrast(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder_q = make_encoder()
        self.encoder_k = copy.deepcopy(self.encoder_q)
        for p in self.encoder_k.parameters():
            p.requires_grad_(False)
        self.register_buffer("queue", F.normalize(torch.randn(QUEUE, DIM_EMB), dim=1))
        self.ptr = 0

    @torch.no_grad()
    def momentum_update(self):
        for p_k, p_q in zip(self.encoder_k.parameters(), self.encoder_q.parameters()):
            p_k.mul_(MOMENTUM).add_(p_q, alpha=1 - MOMENTUM)

    @torch.no_grad()
    def enqueue(self, keys):
        self.queue.index_copy_(0, torch.arange(self.ptr, self.ptr + keys.shape[0]), keys)
        self.ptr = (self.ptr + keys.shape[0]) % QUEUE

    def forward(self, x_q, x_k):
        q = F.normalize(self.encoder_q(x_q), dim=1)
        with torch.no_grad():
            self.momentum_update()
            k = F.normalize(self.encoder_k(x_k), dim=1)
        positive = (q * k).sum(dim=1, keepdim=True)
        negative = q @ self.queue.t()
        logits = torch.cat([positive, negative], dim=1) / TEMPERATURE
        return F.cross_entropy(logits, torch.zeros(q.shape[0], dtype=torch.long)), k


def augment(x):
    return x + 0.1 * torch.randn_like(x)


data = torch.randn(N_SAMPLES, DIM_IN)
model = MomentumContrast()
optimizer = torch.optim.SGD(model.encoder_q.parameters(), lr=0.1, momentum=0.9)

for epoch in range(EPOCHS):
    total = 0.0
    for x in data[torch.randperm(N_SAMPLES)].split(BATCH):
        loss, keys = model(augment(x), augment(x))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        model.enqueue(keys)
        total += loss.item()
    print(f"epoch {epoch}: loss {total / (N_SAMPLES // BATCH):.4f}")
