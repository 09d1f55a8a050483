import torch
from torch.utils.data import DataLoader, TensorDataset

from kd import accuracy, distill, make_student, make_teacher

N_IN, N_CLASSES = 16, 5


def pretrain_teacher(teacher, x, y, steps=30):
    opt = torch.optim.Adam(teacher.parameters(), lr=1e-2)
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(teacher(x), y)
        loss.backward()
        opt.step()
    return loss.item()


if __name__ == "__main__":
    torch.manual_seed(123)
    w = torch.randn(N_IN, N_CLASSES)
    x = torch.randn(256, N_IN)
    y = (x @ w).argmax(1)
    teacher, student = make_teacher(N_IN, N_CLASSES), make_student(N_IN, N_CLASSES)
    print(f"teacher loss {pretrain_teacher(teacher, x, y):.4f}")
    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
    mean_loss = distill(student, teacher, loader, epochs=2)
    with torch.no_grad():
        acc = accuracy(student(x), y)
    param_sum = sum(p.sum().item() for p in student.parameters())
    print(f"mean loss {mean_loss:.4f} student acc {acc:.3f} param_sum {param_sum:.4f}")
