"""Cosine classifier with the class weights normalised at every step."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

IN_DIM, FEAT, N_CLASSES = 12, 24, 4
STEPS, BATCH = 30, 32

backbone = nn.Sequential(nn.Linear(IN_DIM, FEAT), nn.ReLU(), nn.Linear(FEAT, FEAT))
class_weight = nn.Parameter(torch.randn(N_CLASSES, FEAT) * 0.1)
params = list(backbone.parameters()) + [class_weight]
optimizer = torch.optim.SGD(params, lr=0.1, momentum=0.9)
prototypes = torch.randn(N_CLASSES, IN_DIM)
scale = 8.0



def sample_batch(n):
    y = torch.randint(0, N_CLASSES, (n,))
    return prototypes[y] + 0.5 * torch.randn(n, IN_DIM), y


for step in range(STEPS):
    x, y = sample_batch(BATCH)
    weight = F.normalize(class_weight, dim=1)
    feats = F.normalize(backbone(x), dim=1)
    logits = scale * feats @ weight.t()
    loss = F.cross_entropy(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

with torch.no_grad():
    y = torch.arange(N_CLASSES).repeat(16)
    x = prototypes[y] + 0.5 * torch.randn(len(y), IN_DIM)
    logits = F.normalize(backbone(x), dim=1) @ F.normalize(class_weight, dim=1).t()
    acc = (logits.argmax(1) == y).float().mean().item()

param_sum = sum(p.sum().item() for p in params)
print(f"final loss {loss.item():.6f} acc {acc:.4f} param_sum {param_sum:.6f}")
