"""Multi-task trainer that logs per-task running losses with .item() and backpropagates each batch's sum."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(6, 32), nn.ReLU())
        self.cls = nn.Linear(32, 3)
        self.reg = nn.Linear(32, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.cls(h), self.reg(h).squeeze(-1)


class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=5e-3)
        self.history = []

    def train_epoch(self, x, y_cls, y_reg, batch_size=32):
        totals = {"cls": 0.0, "reg": 0.0}
        batch_losses = []
        perm = torch.randperm(x.size(0))
        for i in range(0, x.size(0), batch_size):
            idx = perm[i:i + batch_size]
            logits, pred = self.model(x[idx])
            losses = {"cls": F.cross_entropy(logits, y_cls[idx]), "reg": F.mse_loss(pred, y_reg[idx])}
            loss = sum(losses.values())
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            for k, v in losses.items():
                totals[k] += v.item() * len(idx)
            batch_losses.append(loss.item())
        self.history.append({k: v / x.size(0) for k, v in totals.items()})
        return sum(batch_losses) / len(batch_losses)


torch.manual_seed(101)
x = torch.randn(256, 6)
y_cls = (x[:, :3] + 0.3 * torch.randn(256, 3)).argmax(-1)
y_reg = x[:, 3] * 2 - x[:, 4]
trainer = Trainer(MultiTaskNet())
for epoch in range(6):
    mean_loss = trainer.train_epoch(x, y_cls, y_reg)
last = trainer.history[-1]
param_sum = sum(p.sum().item() for p in trainer.model.parameters())
print(f"final loss {mean_loss:.4f} cls {last['cls']:.4f} reg {last['reg']:.4f} param_sum {param_sum:.4f}")
