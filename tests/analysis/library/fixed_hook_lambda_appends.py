"""Train a classifier with an L1 penalty on its hidden activations, collected by forward hooks."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

N_SAMPLES = 96
IN_FEATURES = 10
N_CLASSES = 4
EPOCHS = 2
BATCH_SIZE = 16
SPARSITY = 1e-3


class Classifier(nn.Module):
    def __init__(self, in_features, hidden, n_classes):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(in_features, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
        )
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, x):
        return self.head(self.body(x))


x = torch.randn(N_SAMPLES, IN_FEATURES)
y = torch.randint(0, N_CLASSES, (N_SAMPLES,))
loader = DataLoader(TensorDataset(x, y), batch_size=BATCH_SIZE, shuffle=True)

model = Classifier(IN_FEATURES, 32, N_CLASSES)
activations = []
for layer in model.body:
    if isinstance(layer, nn.ReLU):
        layer.register_forward_hook(lambda module, args, output: activations.append(output))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

for epoch in range(EPOCHS):
    correct = 0
    for xb, yb in loader:
        activations.clear()
        logits = model(xb)
        penalty = sum(a.abs().mean() for a in activations)
        loss = F.cross_entropy(logits, yb) + SPARSITY * penalty
        opt.zero_grad()
        loss.backward()
        opt.step()
        correct += (logits.argmax(dim=1) == yb).sum().item()
    print(f"epoch {epoch}: accuracy {correct / N_SAMPLES:.4f}")

print(f"{loss.item():.6f}")
