"""Self-distillation without labels (DINO-style): a student, an EMA teacher and a centred target."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class DINOLoss(nn.Module):
    def __init__(self, out_dim, teacher_temp=0.04, student_temp=0.1, center_momentum=0.9):
        super().__init__()
        self.teacher_temp = teacher_temp
        self.student_temp = student_temp
        self.center_momentum = center_momentum
        self.register_buffer("center", torch.zeros(1, out_dim))

    def forward(self, student_output, teacher_output):
        student_out = F.log_softmax(student_output / self.student_temp, dim=-1)
        teacher_out = F.softmax((teacher_output - self.center) / self.teacher_temp, dim=-1)
        loss = torch.sum(-teacher_out * student_out, dim=-1).mean()
        self.update_center(teacher_output)
        return loss

    def update_center(self, teacher_output):
        batch_center = teacher_output.mean(dim=0, keepdim=True)
        self.center = self.center * self.center_momentum + batch_center * (1 - self.center_momentum)


class DINOTrainer:
    def __init__(self, student, out_dim, lr=1e-3, momentum_teacher=0.99):
        self.student = student
        self.teacher = copy.deepcopy(student)
        self.criterion = DINOLoss(out_dim)
        self.optimizer = torch.optim.AdamW(student.parameters(), lr=lr)
        self.momentum_teacher = momentum_teacher

    def augment(self, x):
        return x + 0.2 * torch.randn_like(x)

    def train_step(self, x):
        student_output = self.student(self.augment(x))
        teacher_output = self.teacher(self.augment(x))
        loss = self.criterion(student_output, teacher_output)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        with torch.no_grad():
            for param_q, param_k in zip(self.student.parameters(), self.teacher.parameters()):
                param_k.data.mul_(self.momentum_teacher).add_((1 - self.momentum_teacher) * param_q.detach().data)
        return loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    out_dim = 32
    student = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, out_dim))
    trainer = DINOTrainer(student, out_dim)
    data = torch.randn(128, 16)
    for epoch in range(2):
        for x in data.split(32):
            loss = trainer.train_step(x)
    center_norm = trainer.criterion.center.norm().item()
    param_sum = sum(p.sum().item() for p in student.parameters())
    print(f"final loss {loss:.6f} center {center_norm:.6f} param_sum {param_sum:.6f}")
