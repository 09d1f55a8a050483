"""Mean Teacher on two moons: consistency to an EMA teacher that is updated under no_grad."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from ema import make_teacher, momentum_schedule, update_teacher

STEPS = 100


def moons(n):
    t = torch.rand(n) * math.pi
    y = (torch.rand(n) < 0.5).long()
    x = torch.stack([torch.where(y == 1, torch.cos(t), 1 - torch.cos(t)),
                     torch.where(y == 1, torch.sin(t), 0.5 - torch.sin(t))], dim=-1)
    return x + 0.1 * torch.randn(n, 2), y


class Trainer:
    def __init__(self, student):
        self.student = student
        self.teacher = make_teacher(student)
        self.opt = torch.optim.Adam(student.parameters(), lr=1e-2)
        self.momentum = momentum_schedule(0.9, STEPS)

    def step(self, i, xl, yl, xu):
        sup = F.cross_entropy(self.student(xl + 0.05 * torch.randn_like(xl)), yl)
        s = F.log_softmax(self.student(xu + 0.1 * torch.randn_like(xu)), dim=-1)
        t = F.softmax(self.teacher(xu + 0.1 * torch.randn_like(xu)), dim=-1)
        loss = sup + F.kl_div(s, t, reduction="batchmean")
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        update_teacher(self.teacher, self.student, self.momentum[i])
        return loss.item()


torch.manual_seed(73)
xl, yl = moons(16)
xu, yu = moons(300)
trainer = Trainer(nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 2)))
for i in range(STEPS):
    loss = trainer.step(i, xl, yl, xu[torch.randint(0, 300, (64,))])
with torch.no_grad():
    acc = (trainer.teacher(xu).argmax(-1) == yu).float().mean().item()
param_sum = sum(p.sum().item() for p in trainer.student.parameters())
print(f"final loss {loss:.4f} teacher_acc {acc:.4f} param_sum {param_sum:.4f}")
