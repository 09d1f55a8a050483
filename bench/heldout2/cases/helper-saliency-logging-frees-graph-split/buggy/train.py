"""Tabular classifier; every LOG_EVERY steps the input saliency is logged to see which features it uses."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from diagnostics import format_saliency, input_saliency

LOG_EVERY = 20


def make_data(n=512):
    x = torch.randn(n, 5)
    y = ((x[:, 0] + 0.5 * x[:, 2] ** 2 - 0.5) > 0).long()
    return x, y


def train(model, x_all, y_all, optimizer, steps, batch_size=64):
    saliency_log = []
    for step in range(steps):
        idx = torch.randint(0, x_all.size(0), (batch_size,))
        x = x_all[idx].requires_grad_(True)
        logits = model(x)
        loss = F.cross_entropy(logits, y_all[idx])
        if step % LOG_EVERY == 0:
            saliency_log.append(input_saliency(logits, x))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item(), saliency_log


def main():
    torch.manual_seed(61)
    x, y = make_data()
    model = nn.Sequential(nn.Linear(5, 32), nn.ReLU(), nn.Linear(32, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss, saliency_log = train(model, x, y, optimizer, steps=100)
    print(f"saliency {format_saliency(saliency_log[-1])}")
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {loss:.4f} top_feature {saliency_log[-1].argmax().item()} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
