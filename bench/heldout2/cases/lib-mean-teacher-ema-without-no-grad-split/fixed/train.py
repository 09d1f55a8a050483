"""Mean Teacher semi-supervised classification: few labels, a consistency loss to an EMA teacher."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from ema import make_teacher, momentum_schedule, update_teacher

N_LABELED, N_UNLABELED, C = 40, 400, 3
STEPS = 120


def make_data():
    centers = torch.randn(C, 6) * 1.5
    y = torch.randint(0, C, (N_LABELED + N_UNLABELED,))
    x = centers[y] + torch.randn(len(y), 6)
    return x[:N_LABELED], y[:N_LABELED], x[N_LABELED:], y[N_LABELED:]


def noisy(x):
    return x + 0.3 * torch.randn_like(x)


def train(student, teacher, optimizer, data, steps, cons_weight=2.0):
    xl, yl, xu, _ = data
    momentum = momentum_schedule(0.95, steps)
    for step in range(steps):
        idx = torch.randint(0, xu.size(0), (64,))
        sup = F.cross_entropy(student(noisy(xl)), yl)
        student_prob = F.softmax(student(noisy(xu[idx])), dim=-1)
        teacher_prob = F.softmax(teacher(noisy(xu[idx])), dim=-1)
        loss = sup + cons_weight * F.mse_loss(student_prob, teacher_prob)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        update_teacher(teacher, student, momentum[step])
    return loss.item()


def main():
    torch.manual_seed(53)
    data = make_data()
    student = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, C))
    teacher = make_teacher(student)
    optimizer = torch.optim.Adam(student.parameters(), lr=5e-3)
    loss = train(student, teacher, optimizer, data, STEPS)
    with torch.no_grad():
        acc = (teacher(data[2]).argmax(-1) == data[3]).float().mean().item()
    param_sum = sum(p.sum().item() for p in student.parameters())
    print(f"final loss {loss:.4f} teacher_acc {acc:.4f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
