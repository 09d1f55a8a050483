"""Semi-supervised classification with a mean teacher: the teacher is an exponential moving average
of the student's weights, and a consistency loss pulls the student's predictions on unlabelled data
towards the teacher's on another noisy view of it. The teacher's parameters are frozen, and updated
by hand after each optimizer step."""

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

DIM_IN = 10
CLASSES = 3
BATCH = 16
STEPS = 6
EMA_DECAY = 0.95
CONSISTENCY = 2.0


def make_model():
    return nn.Sequential(nn.Linear(DIM_IN, 32), nn.Tanh(), nn.Linear(32, CLASSES))


def update_ema(ema_model, model, decay):
    for ema_param, param in zip(ema_model.parameters(), model.parameters()):
        ema_param.mul_(decay).add_((1 - decay) * param)


def noisy(x):
    return x + 0.1 * torch.randn_like(x)


def batch():
    x = torch.randn(BATCH, DIM_IN)
    y = (x[:, :CLASSES] + 0.3 * torch.randn(BATCH, CLASSES)).argmax(dim=1)
    return x, y, torch.randn(BATCH, DIM_IN)


def train(student, teacher, optimizer):
    for step in range(STEPS):
        x, y, unlabelled = batch()
        supervised = F.cross_entropy(student(noisy(x)), y)
        student_probs = F.softmax(student(noisy(unlabelled)), dim=1)
        teacher_probs = F.softmax(teacher(noisy(unlabelled)), dim=1)
        consistency = F.mse_loss(student_probs, teacher_probs)
        loss = supervised + CONSISTENCY * consistency
        optimizer.zero_grad()
        loss.backward()  # expect: GG003
        optimizer.step()
        update_ema(teacher, student, EMA_DECAY)
        print(f"step {step}: supervised {supervised.item():.4f}, consistency {consistency.item():.4f}")


if __name__ == "__main__":
    student = make_model()
    teacher = copy.deepcopy(student)
    for p in teacher.parameters():
        p.requires_grad_(False)
    train(student, teacher, torch.optim.Adam(student.parameters(), lr=1e-2))
