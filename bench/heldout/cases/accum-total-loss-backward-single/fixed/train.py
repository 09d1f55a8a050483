"""Small MLP classifier on synthetic blobs; reports the mean training loss per epoch."""
import torch
import torch.nn as nn

torch.manual_seed(0)

N, D, C = 240, 6, 3
BATCH = 24
EPOCHS = 3

centers = torch.randn(C, D) * 2.0
labels = torch.randint(0, C, (N,))
inputs = centers[labels] + torch.randn(N, D)

model = nn.Sequential(
    nn.Linear(D, 32),
    nn.ReLU(),
    nn.Dropout(0.1),
    nn.Linear(32, C),
)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

epoch_losses = []
for epoch in range(EPOCHS):
    model.train()
    perm = torch.randperm(N)
    total_loss = 0
    n_batches = 0
    for start in range(0, N, BATCH):
        idx = perm[start:start + BATCH]
        out = model(inputs[idx])
        loss = criterion(out, labels[idx])
        total_loss += loss.item()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        n_batches += 1
    epoch_losses.append(float(total_loss) / n_batches)

model.eval()
with torch.no_grad():
    acc = (model(inputs).argmax(1) == labels).float().mean().item()

param_sum = sum(p.sum().item() for p in model.parameters())
print(f"final loss {epoch_losses[-1]:.6f} acc {acc:.4f} param_sum {param_sum:.6f}")
