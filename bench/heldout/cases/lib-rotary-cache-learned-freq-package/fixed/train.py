"""Character-level LM with rotary attention and learned rotary frequencies."""
import torch
import torch.nn.functional as F

from tinylm import TinyLM

torch.manual_seed(0)

TEXT = "the quick brown fox jumps over the lazy dog " * 20
chars = sorted(set(TEXT))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in TEXT])

BLOCK = 16
BATCH = 8
STEPS = 20


def get_batch():
    ix = torch.randint(0, len(data) - BLOCK - 1, (BATCH,))
    x = torch.stack([data[i:i + BLOCK] for i in ix])
    y = torch.stack([data[i + 1:i + BLOCK + 1] for i in ix])
    return x, y



@torch.no_grad()
def estimate_loss(model, iters=4):
    model.eval()
    losses = []
    for _ in range(iters):
        xb, yb = get_batch()
        logits = model(xb)
        losses.append(F.cross_entropy(logits.view(-1, logits.size(-1)), yb.view(-1)).item())
    model.train()
    return sum(losses) / len(losses)


model = TinyLM(len(chars))
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)

for step in range(STEPS):
    xb, yb = get_batch()
    logits = model(xb)
    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), yb.view(-1))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()

val_loss = estimate_loss(model)
param_sum = sum(p.sum().item() for p in model.parameters())
print(f"final loss {loss.item():.6f} val {val_loss:.6f} param_sum {param_sum:.6f}")
