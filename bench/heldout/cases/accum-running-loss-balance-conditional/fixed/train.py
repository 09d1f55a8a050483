"""Two-task regression where each loss is divided by its running mean once warm-up is over
(a simple loss-balancing scheme)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TwoTaskNet(nn.Module):
    def __init__(self, in_dim=10, hidden=32):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(in_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.depth = nn.Linear(hidden, 1)
        self.normal = nn.Linear(hidden, 3)

    def forward(self, x):
        h = self.trunk(x)
        return self.depth(h).squeeze(-1), self.normal(h)


def make_batches(n_batches, batch=16, in_dim=10):
    for _ in range(n_batches):
        x = torch.randn(batch, in_dim)
        yield x, x[:, 0] * 3.0, F.normalize(x[:, 1:4], dim=1)


def train(model, optimizer, batches, warmup=4, momentum=0.9):
    running = {"depth": 1.0, "normal": 1.0}
    history = []
    for step, (x, y_depth, y_normal) in enumerate(batches):
        pred_depth, pred_normal = model(x)
        losses = {
            "depth": F.l1_loss(pred_depth, y_depth),
            "normal": 1 - F.cosine_similarity(pred_normal, y_normal).mean(),
        }
        for name, value in losses.items():
            running[name] = momentum * running[name] + (1 - momentum) * value.detach()
        if step < warmup:
            total = losses["depth"] + losses["normal"]
        else:
            total = sum(losses[name] / running[name] for name in losses)
        optimizer.zero_grad()
        total.backward()
        optimizer.step()
        history.append(total.item())
    return history


def main():
    torch.manual_seed(0)
    model = TwoTaskNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    history = train(model, optimizer, make_batches(20))
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {history[-1]:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
