"""Fine-tuning on a new task while penalising drift of intermediate features on an anchor batch
(feature-level 'learning without forgetting')."""
import torch
import torch.nn.functional as F

from finetune.hooks import FeatureRecorder
from finetune.model import build_model

torch.manual_seed(0)

LAMBDA = 0.5
STEPS = 20

model = build_model()
recorder = FeatureRecorder(model, ["1", "3"])
anchor_x = torch.randn(64, 16)

with torch.no_grad():
    model(anchor_x)
anchor_feats = dict(recorder.features)

optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
new_x = torch.randn(256, 16)
new_y = (new_x[:, 4:8]).argmax(1)

for step in range(STEPS):
    idx = torch.randint(0, new_x.size(0), (32,))
    logits = model(new_x[idx])
    task_loss = F.cross_entropy(logits, new_y[idx])

    model(anchor_x)
    drift = sum(F.mse_loss(recorder.features[name], anchor_feats[name]) for name in anchor_feats)
    loss = task_loss + LAMBDA * drift

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

recorder.remove()
with torch.no_grad():
    acc = (model(new_x).argmax(1) == new_y).float().mean().item()
param_sum = sum(p.sum().item() for p in model.parameters())
print(f"final loss {loss.item():.6f} acc {acc:.4f} param_sum {param_sum:.6f}")
