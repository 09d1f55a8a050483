"""Mean-teacher training: a consistency loss between the student and its weight average on
unlabelled data, next to the supervised loss; the average lives in `semi.ema`."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from semi.ema import ModelEMA

DIM_IN = 10
CLASSES = 3
BATCH = 16
STEPS = 6
CONSISTENCY = 2.0


def make_batches(n):
    batches = []
    for _ in range(n):
        x = torch.randn(BATCH, DIM_IN)
        y = (x[:, :CLASSES] + 0.3 * torch.randn(BATCH, CLASSES)).argmax(dim=1)
        batches.append((x, y, torch.randn(BATCH, DIM_IN)))
    return batches


def train(student, ema, loader, optimizer):
    for step, (x, y, unlabelled) in enumerate(loader):
        supervised = F.cross_entropy(student(x), y)
        noisy = unlabelled + 0.1 * torch.randn_like(unlabelled)
        consistency = F.mse_loss(F.softmax(student(noisy), dim=1), F.softmax(ema(unlabelled), dim=1))
        loss = supervised + CONSISTENCY * consistency
        optimizer.zero_grad()
        loss.backward()  # expect: GG003
        optimizer.step()
        ema.update(student)
        print(f"step {step}: supervised {supervised.item():.4f}, consistency {consistency.item():.4f}")


if __name__ == "__main__":
    torch.manual_seed(0)
    student = nn.Sequential(nn.Linear(DIM_IN, 32), nn.Tanh(), nn.Linear(32, CLASSES))
    optimizer = torch.optim.Adam(student.parameters(), lr=1e-2)
    train(student, ModelEMA(student), make_batches(STEPS), optimizer)
