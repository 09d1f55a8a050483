"""Small tabular regression trained full-batch: the mean of an epoch's batch losses is backpropagated once per epoch."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def make_dataset(n=256):
    x = torch.randn(n, 6)
    w = torch.tensor([1.5, -2.0, 0.5, 0.0, 1.0, -0.7])
    y = (x @ w + 0.3 * torch.sin(3 * x[:, 0]) + 0.1 * torch.randn(n)).unsqueeze(-1)
    return TensorDataset(x, y)


def train(model, loader, optimizer, epochs):
    criterion = nn.SmoothL1Loss()
    log = []
    for epoch in range(epochs):
        model.train()
        batch_losses = []
        for x, y in loader:
            batch_losses.append(criterion(model(x), y))
        epoch_loss = torch.stack(batch_losses).mean()
        optimizer.zero_grad()
        epoch_loss.backward()
        optimizer.step()
        log.append(epoch_loss.item())
    return log


@torch.no_grad()
def evaluate(model, dataset):
    x, y = dataset.tensors
    return nn.functional.mse_loss(model(x), y).item()


def main():
    torch.manual_seed(12)
    train_set, val_set = make_dataset(), make_dataset(64)
    loader = DataLoader(train_set, batch_size=32, shuffle=True)
    model = nn.Sequential(nn.Linear(6, 32), nn.SiLU(), nn.Linear(32, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    log = train(model, loader, optimizer, epochs=40)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {log[-1]:.4f} val_mse {evaluate(model, val_set):.4f} param_sum {param_sum:.4f}")


if __name__ == "__main__":
    main()
