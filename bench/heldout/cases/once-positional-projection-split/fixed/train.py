"""Next-token prediction on a copy task with a one-layer transformer."""
import torch
import torch.nn.functional as F

from models import TinyTransformer

VOCAB = 20
SEQ = 12
BATCH = 16


def copy_batch(batch, seq):
    half = torch.randint(1, VOCAB, (batch, seq // 2))
    return torch.cat([half, half], dim=1)


def train(model, optimizer, steps=20):
    model.train()
    base_positions = model.sinusoids
    for step in range(steps):
        tokens = copy_batch(BATCH, SEQ)
        pos = model.pos_proj(base_positions)
        logits = model(tokens, pos)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
    return loss.item()


def main():
    torch.manual_seed(0)
    model = TinyTransformer(VOCAB, n_pos=SEQ)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    loss = train(model, optimizer)
    model.eval()
    with torch.no_grad():
        tokens = copy_batch(4, SEQ)
        preds = model(tokens, model.pos_proj(model.sinusoids)).argmax(-1)
        acc = (preds[:, SEQ // 2:-1] == tokens[:, SEQ // 2 + 1:]).float().mean().item()
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {loss:.6f} acc {acc:.4f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
