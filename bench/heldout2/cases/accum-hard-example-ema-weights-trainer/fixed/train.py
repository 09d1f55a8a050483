"""Classifier trained with hard-example weighting: each sample's weight follows an EMA of its past loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F

N, D, C = 384, 8, 3
BATCH = 48


def make_data():
    x = torch.randn(N, D)
    w = torch.randn(D, C)
    y = (x @ w + 0.8 * torch.randn(N, C)).argmax(-1)
    return x, y


class HardExampleTrainer:
    def __init__(self, model, n_samples, lr=5e-3, momentum=0.8, temperature=2.0):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.momentum = momentum
        self.temperature = temperature
        self.sample_loss = torch.ones(n_samples)

    def weights(self, idx):
        w = torch.softmax(self.sample_loss[idx] / self.temperature, dim=0)
        return w * len(idx)

    def train_step(self, x, y, idx):
        per_sample = F.cross_entropy(self.model(x), y, reduction="none")
        loss = (self.weights(idx) * per_sample).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.sample_loss[idx] = self.momentum * self.sample_loss[idx] + (1 - self.momentum) * per_sample.detach()
        return loss.item()

    @torch.no_grad()
    def accuracy(self, x, y):
        return (self.model(x).argmax(-1) == y).float().mean().item()


def main():
    torch.manual_seed(13)
    x, y = make_data()
    model = nn.Sequential(nn.Linear(D, 32), nn.ReLU(), nn.Linear(32, C))
    trainer = HardExampleTrainer(model, N)
    for epoch in range(5):
        perm = torch.randperm(N)
        for i in range(0, N, BATCH):
            idx = perm[i:i + BATCH]
            loss = trainer.train_step(x[idx], y[idx], idx)
        print(f"epoch {epoch} loss {loss:.4f}")
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {loss:.4f} acc {trainer.accuracy(x, y):.4f} "
          f"max_weight_loss {trainer.sample_loss.max().item():.4f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
