import torch

from .losses import *


def distill(student, teacher, loader, epochs, lr=1e-2, log_every=4):
    opt = torch.optim.SGD(student.parameters(), lr=lr, momentum=0.9)
    teacher.eval()
    epoch = 0
    while epoch < epochs:
        total_loss = 0
        for i, (x, y) in enumerate(loader):
            with torch.no_grad():
                t_logits = teacher(x)
            s_logits = student(x)
            loss = distill_loss(s_logits, t_logits, y)
            total_loss += loss
            opt.zero_grad()
            total_loss.backward()
            opt.step()
            if i % log_every == 0:
                print(f"epoch {epoch} batch {i} loss {loss.item():.4f} acc {accuracy(s_logits, y):.3f}")
        epoch += 1
        print(f"epoch {epoch} mean loss {float(total_loss) / len(loader):.4f}")
    return float(total_loss) / len(loader)
