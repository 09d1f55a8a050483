"""Learning which weights to keep: soft masks with a sparsity penalty and an annealed temperature."""
import torch
import torch.nn.functional as F

from prune import MaskedMLP

torch.manual_seed(0)

IN_DIM, HIDDEN, OUT_DIM = 20, 32, 4
EPOCHS = 3
LAMBDA = 1e-2

x_all = torch.randn(160, IN_DIM)
y_all = x_all[:, :OUT_DIM].argmax(1)
loader = list(zip(x_all.split(32), y_all.split(32)))

model = MaskedMLP(IN_DIM, HIDDEN, OUT_DIM)
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)


def evaluate(model, x, y, temperature):
    model.eval()
    with torch.no_grad():
        masks = model.soft_masks(temperature)
        acc = (model(x, masks).argmax(1) == y).float().mean().item()
    model.train()
    return acc


temperature = 1.0
for epoch in range(EPOCHS):
    masks = model.soft_masks(temperature)
    for x, y in loader:
        logits = model(x, masks)
        loss = F.cross_entropy(logits, y) + LAMBDA * model.sparsity_penalty(masks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    temperature *= 0.8

with torch.no_grad():
    final_masks = model.soft_masks(temperature)
    kept = sum((m > 0.5).float().mean().item() for m in final_masks.values()) / len(final_masks)

acc = evaluate(model, x_all, y_all, temperature)
param_sum = sum(p.sum().item() for p in model.parameters())
print(f"final loss {loss.item():.6f} kept {kept:.4f} acc {acc:.4f} param_sum {param_sum:.6f}")
