"""Multi-task model: one backbone, a classification head and a regression head."""
import torch
from torch import nn

torch.manual_seed(0)

x = torch.randn(64, 6)
class_target = (x[:, 0] + x[:, 1] > 0).long()
regression_target = (x[:, 2] - x[:, 3]).unsqueeze(1)


class MultiTaskModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU())
        self.class_head = nn.Linear(16, 2)
        self.regression_head = nn.Linear(16, 1)

    def forward(self, x):
        features = self.backbone(x)
        return self.class_head(features), self.regression_head(features)


model = MultiTaskModel()
optimizer = torch.optim.AdamW(model.parameters(), lr=0.03)
classification_loss = nn.CrossEntropyLoss()
regression_loss = nn.MSELoss()

steps = 40
for step in range(steps):
    optimizer.zero_grad(set_to_none=True)
    class_logits, reg_pred = model(x)
    loss_cls = classification_loss(class_logits, class_target)
    loss_reg = 0.5 * regression_loss(reg_pred, regression_target)
    (loss_cls + loss_reg).backward()
    optimizer.step()
    if step in {0, steps - 1}:
        acc = (class_logits.argmax(1) == class_target).float().mean().item()

param_sum = sum(p.sum().item() for p in model.parameters())
print(f"final loss_cls {loss_cls.item():.6f} loss_reg {loss_reg.item():.6f} acc {acc:.4f} param_sum {param_sum:.6f}")
