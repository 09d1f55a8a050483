"""Two classification tasks trained through runner.Engine."""
import torch
import torch.nn.functional as F

from runner import Engine
from runner.model import TwoTask



def make_data(n=160):
    x = torch.randn(n, 12)
    y_a = x[:, :3].argmax(1)
    y_b = (x[:, 3] > 0).long()
    return x, y_a, y_b


def accuracies(model, x, y_a, y_b):
    model.eval()
    with torch.no_grad():
        out_a, out_b = model(x)
        acc_a = (out_a.argmax(1) == y_a).float().mean().item()
        acc_b = (out_b.argmax(1) == y_b).float().mean().item()
    model.train()
    return acc_a, acc_b


def main():
    torch.manual_seed(0)
    x, y_a, y_b = make_data()
    model = TwoTask()
    engine = Engine(model, torch.optim.Adam(model.parameters(), lr=2e-3))
    for epoch in range(2):
        for xb, ab, bb in zip(x.split(32), y_a.split(32), y_b.split(32)):
            out_a, out_b = model(xb)
            loss = F.cross_entropy(out_a, ab) + F.cross_entropy(out_b, bb)
            last = engine.step(loss)
    acc_a, acc_b = accuracies(model, x, y_a, y_b)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {last:.6f} acc_a {acc_a:.4f} acc_b {acc_b:.4f} steps {engine.steps} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
