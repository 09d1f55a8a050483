"""Hint-based distillation (FitNets style): match the student's intermediate features to the teacher's."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from feature_hooks import FeatureTap


def make_net(width):
    return nn.Sequential(nn.Linear(10, width), nn.ReLU(), nn.Linear(width, 16), nn.ReLU(), nn.Linear(16, 4))


def pretrain(model, x, y, steps=20):
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(steps):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()


if __name__ == "__main__":
    torch.manual_seed(22)
    w = torch.randn(10, 4)
    x_all = torch.randn(320, 10)
    y_all = (x_all @ w).argmax(1)
    teacher, student = make_net(64), make_net(16)
    pretrain(teacher, x_all, y_all)
    teacher.eval()
    t_tap, s_tap = FeatureTap(teacher, ["3"]), FeatureTap(student, ["3"])
    optimizer = torch.optim.Adam(student.parameters(), lr=5e-3)
    for step in range(30):
        idx = torch.randint(0, 320, (32,))
        x, y = x_all[idx], y_all[idx]
        t_tap.reset()
        s_tap.reset()
        with torch.no_grad():
            teacher(x)
        logits = student(x)
        hint = F.mse_loss(s_tap.features["3"], t_tap.features["3"])
        loss = F.cross_entropy(logits, y) + 0.5 * hint
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f} hint {hint.item():.4f}")
    t_tap.close()
    s_tap.close()
    with torch.no_grad():
        acc = (student(x_all).argmax(1) == y_all).float().mean().item()
    param_sum = sum(p.sum().item() for p in student.parameters())
    print(f"loss {loss.item():.4f} acc {acc:.3f} param_sum {param_sum:.4f}")
