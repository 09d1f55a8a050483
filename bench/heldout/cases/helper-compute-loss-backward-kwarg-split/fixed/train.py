"""Tabular classifier; the loss computation lives in utils.compute_loss."""
import torch
import torch.nn as nn

from model import MLP
from utils import accuracy, compute_loss

torch.manual_seed(0)

IN_DIM, N_CLASSES = 14, 3
EPOCHS = 3
BATCH = 32

x = torch.randn(224, IN_DIM)
y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
x_train, y_train, x_val, y_val = x[:192], y[:192], x[192:], y[192:]

model = MLP(IN_DIM, 48, N_CLASSES)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9)

for epoch in range(EPOCHS):
    model.train()
    perm = torch.randperm(len(x_train))
    for i in range(0, len(perm), BATCH):
        idx = perm[i:i + BATCH]
        batch = (x_train[idx], y_train[idx])
        optimizer.zero_grad()
        loss = compute_loss(model, batch, criterion, backward=False)
        loss.backward()
        optimizer.step()
    scheduler.step()

model.eval()
val_acc = accuracy(model, x_val, y_val)
with torch.no_grad():
    val_loss = criterion(model(x_val), y_val).item()
param_sum = sum(p.sum().item() for p in model.parameters())
print(f"final loss {loss.item():.6f} val_loss {val_loss:.6f} val_acc {val_acc:.4f} "
      f"param_sum {param_sum:.6f}")
