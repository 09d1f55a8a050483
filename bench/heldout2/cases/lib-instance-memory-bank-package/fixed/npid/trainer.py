import torch
import torch.nn.functional as F

from .bank import MemoryBank


class InstanceDiscriminationTrainer:
    def __init__(self, encoder, n_items, dim, lr=0.03, temperature=0.1):
        self.encoder = encoder
        self.bank = MemoryBank(n_items, dim)
        self.temperature = temperature
        self.opt = torch.optim.SGD(encoder.parameters(), lr=lr, momentum=0.9)

    def step(self, x, idx):
        feats = F.normalize(self.encoder(x), dim=1)
        loss = F.cross_entropy(self.bank.logits(feats, self.temperature), idx)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.bank.update(feats, idx)
        return loss.item()
