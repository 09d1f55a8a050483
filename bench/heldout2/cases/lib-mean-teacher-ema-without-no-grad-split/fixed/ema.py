import copy
import math

import torch


def make_teacher(student):
    teacher = copy.deepcopy(student)
    for p in teacher.parameters():
        p.requires_grad_(False)
    return teacher


def momentum_schedule(base, total_steps):
    """Cosine ramp of the EMA momentum from base to 1 (as in BYOL / DINO)."""
    steps = torch.arange(total_steps, dtype=torch.float32)
    return 1 - (1 - base) * (torch.cos(math.pi * steps / total_steps) + 1) / 2


@torch.no_grad()
def update_teacher(teacher, student, m):
    for tp, sp in zip(teacher.parameters(), student.parameters()):
        tp.mul_(m).add_((1 - m) * sp)
