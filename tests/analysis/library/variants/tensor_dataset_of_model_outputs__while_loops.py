"""Distil a small teacher MLP into a smaller student on the teacher's soft labels."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

N_SAMPLES = 128
IN_FEATURES = 8
N_CLASSES = 3
EPOCHS = 3
BATCH_SIZE = 32
TEMPERATURE = 2.0


class MLP(nn.Module):
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_features, hidden),
            nn.ReLU(),
            nn.Linear(hidden, out_features),
        )

    def forward(self, x):
        return self.net(x)


teacher = MLP(IN_FEATURES, 32, N_CLASSES)
teacher.eval()
student = MLP(IN_FEATURES, 8, N_CLASSES)

inputs = torch.randn(N_SAMPLES, IN_FEATURES)
soft_labels = F.softmax(teacher(inputs) / TEMPERATURE, dim=-1)
dataset = TensorDataset(inputs, soft_labels)
loader = DataLoader(dataset, batch_size=BATCH_SIZE, shuffle=True)
opt = torch.optim.Adam(student.parameters(), lr=1e-2)

epoch = 0
while epoch < EPOCHS:
    total = 0.0
    batches = iter(loader)
    while True:
        try:
            xb, yb = next(batches)
        except StopIteration:
            break
        log_probs = F.log_softmax(student(xb) / TEMPERATURE, dim=-1)
        loss = F.kl_div(log_probs, yb, reduction="batchmean") * TEMPERATURE**2
        opt.zero_grad()
        loss.backward()  # expect: GG006
        opt.step()
        total += loss.item() * xb.shape[0]
    print(f"epoch {epoch}: {total / N_SAMPLES:.6f}")
    epoch += 1

print(f"{loss.item():.6f}")
