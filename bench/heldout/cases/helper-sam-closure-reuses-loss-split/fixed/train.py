"""Plain SGD for a few epochs, then sharpness-aware minimisation (SAM)."""
import torch
import torch.nn as nn

from sam import SAM

SAM_START = 1
EPOCHS = 3


def make_data(n=160, dim=10):
    x = torch.randn(n, dim)
    y = (x[:, :3].sum(1) > 0).long()
    return list(zip(x.split(32), y.split(32)))


def train(model, optimizer, criterion, batches):
    for epoch in range(EPOCHS):
        model.train()
        for x, y in batches:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            if epoch < SAM_START:
                optimizer.base_optimizer.step()
                continue

            def closure():
                loss = criterion(model(x), y)
                loss.backward()
                return loss

            optimizer.step(closure)
    return loss.item()


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
    optimizer = SAM(model.parameters(), torch.optim.SGD, rho=0.05, lr=0.1, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    batches = make_data()
    loss = train(model, optimizer, criterion, batches)
    with torch.no_grad():
        acc = sum((model(x).argmax(1) == y).sum().item() for x, y in batches) / 160
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {loss:.6f} acc {acc:.4f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
