import torch
import torch.nn as nn

from trainlib import Engine

config = {"n_in": 12, "n_classes": 3, "width": 24, "lr": 0.05, "steps": 20, "batch": 32, "monitor_every": 5}


def make_data(n, w, g):
    x = torch.randn(n, config["n_in"], generator=g)
    return x, (x @ w).argmax(1)


if __name__ == "__main__":
    torch.manual_seed(91)
    g = torch.Generator().manual_seed(91)
    w = torch.randn(config["n_in"], config["n_classes"], generator=g)
    model = nn.Sequential(nn.Linear(config["n_in"], config["width"]), nn.ReLU(),
                          nn.Linear(config["width"], config["n_classes"]))
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"], momentum=0.9)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=config["lr"], total_steps=config["steps"])
    engine = Engine(model, optimizer, scheduler, config["monitor_every"])
    for _ in range(config["steps"]):
        loss = engine.train_batch(*make_data(config["batch"], w, g))
    acc = engine.accuracy(*make_data(256, w, g))
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"loss {loss:.4f} acc {acc:.3f} param_sum {param_sum:.4f}")
