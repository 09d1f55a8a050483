"""Contrastive learning with a queue of negatives (keys enqueued detached)."""
import torch
import torch.nn as nn

from bankssl.trainer import QueueContrastTrainer

torch.manual_seed(89)
centers = torch.randn(5, 10) * 1.5
data = centers[torch.randint(0, 5, (320,))] + 0.5 * torch.randn(320, 10)
encoder = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 8))
trainer = QueueContrastTrainer(encoder, dim=8)
for epoch in range(3):
    perm = torch.randperm(320)
    for i in range(0, 320, 32):
        x = data[perm[i:i + 32]]
        loss = trainer.step(x + 0.2 * torch.randn_like(x), x + 0.2 * torch.randn_like(x))
param_sum = sum(p.sum().item() for p in encoder.parameters())
print(f"final loss {loss:.4f} queue_ptr {trainer.queue.ptr} param_sum {param_sum:.4f}")
