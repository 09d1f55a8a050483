"""Detector-style trainer: a classification and a box-regression loss, logged per epoch."""
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyDetector(nn.Module):
    def __init__(self, in_dim=16, n_classes=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(in_dim, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.cls_head = nn.Linear(32, n_classes)
        self.box_head = nn.Linear(32, 4)

    def forward(self, x):
        feats = self.backbone(x)
        return self.cls_head(feats), self.box_head(feats)


class Trainer:
    def __init__(self, model, lr=1e-3):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
        self.loss_totals = defaultdict(float)

    def compute_losses(self, x, labels, boxes):
        logits, pred_boxes = self.model(x)
        return {
            "loss_cls": F.cross_entropy(logits, labels),
            "loss_box": F.smooth_l1_loss(pred_boxes, boxes),
        }

    def train_step(self, x, labels, boxes):
        loss_dict = self.compute_losses(x, labels, boxes)
        for name, value in loss_dict.items():
            self.loss_totals[name] += value
        total = sum(self.loss_totals.values())
        self.optimizer.zero_grad()
        total.backward()
        self.optimizer.step()

    def train_epoch(self, loader):
        self.loss_totals = defaultdict(float)
        for x, labels, boxes in loader:
            self.train_step(x, labels, boxes)
        return {k: float(v) / len(loader) for k, v in self.loss_totals.items()}


def make_loader(n=160, batch=16):
    x = torch.randn(n, 16)
    labels = x[:, :3].argmax(1)
    boxes = torch.sigmoid(x[:, 3:7])
    return list(zip(x.split(batch), labels.split(batch), boxes.split(batch)))


if __name__ == "__main__":
    torch.manual_seed(0)
    trainer = Trainer(TinyDetector())
    loader = make_loader()
    for epoch in range(2):
        logs = trainer.train_epoch(loader)
    param_sum = sum(p.sum().item() for p in trainer.model.parameters())
    print(f"final loss_cls {logs['loss_cls']:.6f} loss_box {logs['loss_box']:.6f} param_sum {param_sum:.6f}")
