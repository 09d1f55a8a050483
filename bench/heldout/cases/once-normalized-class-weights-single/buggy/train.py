"""Cosine-similarity classifier (normalised features times normalised class weights)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

IN_DIM, FEAT_DIM, N_CLASSES = 16, 32, 6
STEPS = 30
BATCH = 24


class CosineClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(IN_DIM, FEAT_DIM), nn.ReLU(), nn.Linear(FEAT_DIM, FEAT_DIM))
        self.weight = nn.Parameter(torch.randn(N_CLASSES, FEAT_DIM) * 0.1)
        self.scale = 10.0


model = CosineClassifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)

prototypes = torch.randn(N_CLASSES, IN_DIM)

weight = F.normalize(model.weight, dim=1)

for step in range(STEPS):
    y = torch.randint(0, N_CLASSES, (BATCH,))
    x = prototypes[y] + 0.5 * torch.randn(BATCH, IN_DIM)

    feats = F.normalize(model.backbone(x), dim=1)
    logits = model.scale * feats @ weight.t()
    loss = F.cross_entropy(logits, y)

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

    if step % 10 == 0:
        acc = (logits.argmax(1) == y).float().mean().item()

param_sum = sum(p.sum().item() for p in model.parameters())
print(f"final loss {loss.item():.6f} acc {acc:.4f} param_sum {param_sum:.6f}")
