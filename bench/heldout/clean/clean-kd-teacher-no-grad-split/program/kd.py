import torch
import torch.nn as nn
import torch.nn.functional as F


@torch.no_grad()
def teacher_logits(teacher, batches):
    teacher.eval()
    return [teacher(x) for x, _ in batches]


def kd_loss(student_logits, labels, teacher_logits, alpha=0.7, T=3.0):
    soft = F.kl_div(F.log_softmax(student_logits / T, 1), F.softmax(teacher_logits / T, 1),
                    reduction="batchmean") * T * T
    return alpha * soft + (1 - alpha) * F.cross_entropy(student_logits, labels)


def net(width):
    return nn.Sequential(nn.Linear(12, width), nn.ReLU(), nn.Linear(width, 4))
