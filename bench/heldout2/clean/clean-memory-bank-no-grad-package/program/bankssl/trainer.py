import torch
import torch.nn.functional as F

from .memory import FeatureQueue


class QueueContrastTrainer:
    def __init__(self, encoder, dim, queue_size=128, temperature=0.2):
        self.encoder = encoder
        self.queue = FeatureQueue(queue_size, dim)
        self.temperature = temperature
        self.opt = torch.optim.Adam(encoder.parameters(), lr=3e-3)

    def step(self, x1, x2):
        q = F.normalize(self.encoder(x1), dim=1)
        k = F.normalize(self.encoder(x2), dim=1)
        pos = (q * k).sum(1, keepdim=True)
        neg = q @ self.queue.negatives().T
        logits = torch.cat([pos, neg], dim=1) / self.temperature
        loss = F.cross_entropy(logits, torch.zeros(q.size(0), dtype=torch.long))
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.queue.push(k)
        return loss.item()
