"""Multi-task learning with homoscedastic uncertainty weighting (Kendall et al.)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SharedNet(nn.Module):
    def __init__(self, in_dim=12, hidden=32, n_classes=3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.cls = nn.Linear(hidden, n_classes)
        self.reg = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.encoder(x)
        return self.cls(h), self.reg(h).squeeze(-1)


class UncertaintyTrainer:
    def __init__(self, model, lr=3e-3):
        self.model = model
        self.log_vars = nn.Parameter(torch.zeros(2))
        self.opt = torch.optim.Adam(list(model.parameters()) + [self.log_vars], lr=lr)

    def step(self, x, y_cls, y_reg):
        logits, pred = self.model(x)
        l_cls = F.cross_entropy(logits, y_cls)
        l_reg = F.mse_loss(pred, y_reg)
        self.weights = torch.exp(-self.log_vars)
        loss = self.weights[0] * l_cls + self.weights[1] * l_reg + self.log_vars.sum()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()

    def fit(self, batches, epochs=2):
        for epoch in range(epochs):
            for x, y_cls, y_reg in batches:
                last = self.step(x, y_cls, y_reg)
        return last


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(160, 12)
    y_cls = x[:, :3].argmax(1)
    y_reg = x[:, 3] * 2 + x[:, 4]
    batches = list(zip(x.split(32), y_cls.split(32), y_reg.split(32)))
    trainer = UncertaintyTrainer(SharedNet())
    loss = trainer.fit(batches)
    param_sum = sum(p.sum().item() for p in trainer.model.parameters())
    print(f"final loss {loss:.6f} log_vars {trainer.log_vars.sum().item():.6f} param_sum {param_sum:.6f}")
