"""Classifier training that logs the encoder's per-layer gradient norms every few steps."""
import torch
import torch.nn.functional as F

from monitor import layer_grad_norms
from monitor.model import EncoderClassifier

torch.manual_seed(0)

IN_DIM, HIDDEN, N_CLASSES = 10, 32, 3
STEPS = 24
log_interval = 6

model = EncoderClassifier(IN_DIM, HIDDEN, N_CLASSES)
optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
x_all = torch.randn(256, IN_DIM)
y_all = (x_all[:, 0] > 0).long() + (x_all[:, 1] > 1).long()



def evaluate(model, x, y):
    model.eval()
    with torch.no_grad():
        acc = (model(x).argmax(1) == y).float().mean().item()
    model.train()
    return acc


grad_log = []
for step in range(1, STEPS + 1):
    idx = torch.randint(0, x_all.size(0), (32,))
    logits = model(x_all[idx])
    loss = F.cross_entropy(logits, y_all[idx])

    if step % log_interval == 0:
        norms = layer_grad_norms(loss, model.encoder.named_parameters())
        grad_log.append(sum(norms.values()))

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

acc = evaluate(model, x_all, y_all)
param_sum = sum(p.sum().item() for p in model.parameters())
print(f"final loss {loss.item():.6f} acc {acc:.4f} grad_log {grad_log[-1]:.6f} param_sum {param_sum:.6f}")
