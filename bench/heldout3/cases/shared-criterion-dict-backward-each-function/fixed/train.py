"""1-D segmentation of pulses in a noisy signal with a weighted mix of criteria."""
import torch
import torch.nn as nn

from criteria import build_criteria

cfg = {"length": 32, "batch": 16, "steps": 30, "lr": 3e-3, "w_bce": 1.0, "w_dice": 0.5, "w_boundary": 0.2,
       "log_every": 10}


def make_batch(batch, length):
    start = torch.randint(0, length - 8, (batch, 1))
    width = torch.randint(3, 8, (batch, 1))
    pos = torch.arange(length)[None]
    mask = ((pos >= start) & (pos < start + width)).float()
    signal = mask * 1.5 + 0.4 * torch.randn(batch, length)
    return signal.unsqueeze(1), mask.unsqueeze(1)


def build_model():
    return nn.Sequential(nn.Conv1d(1, 8, 5, padding=2), nn.ReLU(), nn.Conv1d(8, 8, 5, padding=2), nn.ReLU(),
                         nn.Conv1d(8, 1, 1))


def train(model, criteria, optimizer, cfg):
    for step in range(cfg["steps"]):
        x, y = make_batch(cfg["batch"], cfg["length"])
        logits = model(x)
        optimizer.zero_grad()
        logs, total = {}, 0.0
        for name, (criterion, weight) in criteria.items():
            loss = weight * criterion(logits, y)
            total = total + loss
            logs[name] = loss.item()
        total.backward()
        optimizer.step()
        if step % cfg["log_every"] == 0:
            print(f"step {step} " + " ".join(f"{k} {v:.4f}" for k, v in logs.items()))
    return logs


@torch.no_grad()
def iou(model):
    x, y = make_batch(64, cfg["length"])
    pred = (model(x) > 0).float()
    return ((pred * y).sum() / ((pred + y) > 0).float().sum()).item()


if __name__ == "__main__":
    torch.manual_seed(10)
    model = build_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    logs = train(model, build_criteria(cfg), optimizer, cfg)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"bce {logs['bce']:.4f} iou {iou(model):.4f} param_sum {param_sum:.4f}")
