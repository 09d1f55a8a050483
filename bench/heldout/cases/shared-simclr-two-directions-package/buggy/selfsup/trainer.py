import torch

from .losses import info_nce


def augment(x, noise=0.1, drop=0.2):
    mask = (torch.rand_like(x) > drop).float()
    return x * mask + noise * torch.randn_like(x)


class SSLTrainer:
    def __init__(self, model, lr=1e-3, temperature=0.2):
        self.model = model
        self.temperature = temperature
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=1e-6)

    def train_step(self, x):
        self.model.train()
        z1 = self.model(augment(x))
        z2 = self.model(augment(x))
        self.optimizer.zero_grad()
        loss_12 = 0.5 * info_nce(z1, z2, self.temperature)
        loss_12.backward()
        loss_21 = 0.5 * info_nce(z2, z1, self.temperature)
        loss_21.backward()
        self.optimizer.step()
        return loss_12.item() + loss_21.item()
