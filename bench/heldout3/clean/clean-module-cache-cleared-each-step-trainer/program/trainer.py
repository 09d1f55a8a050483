import torch
import torch.nn as nn
import torch.nn.functional as F

from layers import CosineCodebook


class Model(nn.Module):
    def __init__(self, dim=8, n_codes=12):
        super().__init__()
        self.enc = nn.Linear(4, dim)
        self.codebook = CosineCodebook(n_codes, dim)
        self.dec = nn.Linear(dim, 4)

    def forward(self, x):
        h = self.enc(x)
        return self.dec(h + self.codebook(h))


class Trainer:
    def __init__(self, model, lr=5e-3):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)

    def train_step(self, x):
        self.model.codebook.clear_cache()
        recon = self.model(x)
        loss = F.mse_loss(recon, x)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()
