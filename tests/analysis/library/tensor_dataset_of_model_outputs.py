import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

teacher = nn.Linear(4, 2)
student = nn.Linear(4, 2)
x = torch.randn(32, 4)
y = teacher(x)
loader = DataLoader(TensorDataset(x, y), batch_size=8)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
for epoch in range(2):
    for xb, yb in loader:
        loss = (student(xb) - yb).pow(2).mean()
        opt.zero_grad()
        loss.backward()  # expect: GG006
        opt.step()
