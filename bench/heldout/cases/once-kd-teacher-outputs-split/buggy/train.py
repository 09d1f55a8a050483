"""Knowledge distillation from a (pretend pre-trained) wide teacher into a narrow student."""
import torch

from kd_utils import fetch_teacher_outputs, loss_fn_kd, make_net

IN_DIM, N_CLASSES = 16, 5


def train_kd(student, teacher_outputs, optimizer, batches):
    student.train()
    total = 0.0
    for i, (x, y) in enumerate(batches):
        output_batch = student(x)
        loss = loss_fn_kd(output_batch, y, teacher_outputs[i])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(batches)


def evaluate(student, batches):
    student.eval()
    with torch.no_grad():
        correct = sum((student(x).argmax(1) == y).sum().item() for x, y in batches)
    return correct / sum(len(y) for _, y in batches)


def main():
    torch.manual_seed(0)
    x = torch.randn(128, IN_DIM)
    y = x[:, :N_CLASSES].argmax(1)
    batches = list(zip(x.split(32), y.split(32)))
    teacher = make_net(IN_DIM, 128, N_CLASSES)
    student = make_net(IN_DIM, 16, N_CLASSES)
    optimizer = torch.optim.Adam(student.parameters(), lr=1e-3)
    teacher_outputs = fetch_teacher_outputs(teacher, batches)
    for epoch in range(3):
        train_loss = train_kd(student, teacher_outputs, optimizer, batches)
    acc = evaluate(student, batches)
    param_sum = sum(p.sum().item() for p in student.parameters())
    print(f"final loss {train_loss:.6f} acc {acc:.4f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
