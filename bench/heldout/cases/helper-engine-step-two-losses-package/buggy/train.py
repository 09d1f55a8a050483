"""Toy single-object detector: class + box regression, trained through core.Engine."""
import torch
import torch.nn.functional as F

from core import Engine
from core.detector import Detector


def synthetic_scenes(n, in_dim=16):
    x = torch.randn(n, in_dim)
    labels = x[:, :3].argmax(1)
    boxes = torch.sigmoid(x[:, 3:7] + 0.1 * torch.randn(n, 4))
    return x, labels, boxes


@torch.no_grad()
def evaluate(model, x, labels, boxes):
    model.eval()
    logits, pred_boxes = model(x)
    model.train()
    return (logits.argmax(1) == labels).float().mean().item(), F.l1_loss(pred_boxes, boxes).item()


def main():
    torch.manual_seed(0)
    x, labels, boxes = synthetic_scenes(160)
    model = Detector()
    engine = Engine(model, torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9))
    for epoch in range(2):
        for xb, lb, bb in zip(x.split(32), labels.split(32), boxes.split(32)):
            logits, pred_boxes = model(xb)
            cls_loss = F.cross_entropy(logits, lb)
            box_loss = F.l1_loss(pred_boxes, bb)
            engine.step(cls_loss)
            engine.step(box_loss)
    acc, l1 = evaluate(model, x, labels, boxes)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final acc {acc:.4f} box_l1 {l1:.6f} steps {engine.global_step} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
