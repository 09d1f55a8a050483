"""Two-head model trained by a small Trainer: the task losses are summed, one backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TwoHead(nn.Module):
    def __init__(self, in_dim=10, hidden=32):
        super().__init__()
        self.shared = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.cls = nn.Linear(hidden, 3)
        self.reg = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.shared(x)
        return self.cls(h), self.reg(h).squeeze(-1)


class Trainer:
    def __init__(self, model, lr=2e-3, reg_weight=0.5):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.reg_weight = reg_weight
        self.history = []

    def train_step(self, x, y_cls, y_reg):
        self.model.train()
        logits, pred = self.model(x)
        loss_cls = F.cross_entropy(logits, y_cls)
        loss_reg = F.mse_loss(pred, y_reg)
        loss = loss_cls + self.reg_weight * loss_reg
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.history.append((loss_cls.item(), loss_reg.item()))
        return loss.item()

    def fit(self, batches, epochs=2):
        for epoch in range(epochs):
            for batch in batches:
                loss = self.train_step(*batch)
        return loss


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(192, 10)
    y_cls = x[:, :3].argmax(1)
    y_reg = x[:, 3] - x[:, 4]
    trainer = Trainer(TwoHead())
    loss = trainer.fit(list(zip(x.split(32), y_cls.split(32), y_reg.split(32))))
    param_sum = sum(p.sum().item() for p in trainer.model.parameters())
    print(f"final loss {loss:.6f} param_sum {param_sum:.6f}")
