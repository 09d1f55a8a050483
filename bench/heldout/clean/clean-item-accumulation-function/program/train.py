"""pytorch/examples mnist-shaped training on synthetic data."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 64)
        self.fc2 = nn.Linear(64, 4)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def train(model, train_loader, optimizer, epoch, log_interval=4):
    model.train()
    total_loss = 0.0
    for batch_idx, (data, target) in enumerate(train_loader):
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
        if batch_idx % log_interval == 0:
            last_logged = loss.item()
    return total_loss / len(train_loader), last_logged


def test(model, test_loader):
    model.eval()
    test_loss, correct = 0.0, 0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            correct += output.argmax(dim=1).eq(target).sum().item()
    return test_loss / len(test_loader.dataset), correct / len(test_loader.dataset)


def main():
    torch.manual_seed(0)
    x = torch.randn(256, 20)
    y = x[:, :4].argmax(1)
    train_loader = DataLoader(TensorDataset(x[:192], y[:192]), batch_size=16, shuffle=True)
    test_loader = DataLoader(TensorDataset(x[192:], y[192:]), batch_size=64)
    model = Net()
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    for epoch in range(1, 3):
        train_loss, _ = train(model, train_loader, optimizer, epoch)
        test_loss, acc = test(model, test_loader)
    print(f"final loss {train_loss:.6f} test {test_loss:.6f} acc {acc:.4f}")


if __name__ == "__main__":
    main()
