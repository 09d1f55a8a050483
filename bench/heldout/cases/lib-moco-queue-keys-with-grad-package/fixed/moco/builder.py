import torch
import torch.nn as nn
import torch.nn.functional as F


class MoCo(nn.Module):
    """Momentum contrast: a query encoder, a momentum key encoder and a queue of negative keys."""

    def __init__(self, base_encoder, dim=16, K=64, m=0.99, T=0.1):
        super().__init__()
        self.K, self.m, self.T = K, m, T
        self.encoder_q = base_encoder(dim)
        self.encoder_k = base_encoder(dim)
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data.copy_(param_q.data)
        self.register_buffer("queue", F.normalize(torch.randn(K, dim), dim=1))

    @torch.no_grad()
    def _momentum_update_key_encoder(self):
        for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            param_k.data = param_k.data * self.m + param_q.data * (1.0 - self.m)

    def _dequeue_and_enqueue(self, keys):
        self.queue = torch.cat([keys, self.queue], dim=0)[: self.K]

    def forward(self, im_q, im_k):
        q = F.normalize(self.encoder_q(im_q), dim=1)
        with torch.no_grad():
            self._momentum_update_key_encoder()
            k = F.normalize(self.encoder_k(im_k), dim=1)
        l_pos = (q * k).sum(dim=1, keepdim=True)
        l_neg = q @ self.queue.t()
        logits = torch.cat([l_pos, l_neg], dim=1) / self.T
        labels = torch.zeros(logits.size(0), dtype=torch.long)
        self._dequeue_and_enqueue(k)
        return logits, labels
