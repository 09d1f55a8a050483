"""Gradient accumulation over micro-batches, in the shape of pytorch/examples' mnist train()."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 64)
        self.dropout = nn.Dropout(0.25)
        self.fc2 = nn.Linear(64, 4)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = self.dropout(x)
        return F.log_softmax(self.fc2(x), dim=1)


def train(model, train_loader, optimizer, epoch, accum_steps=4):
    model.train()
    accum_loss = 0.0
    last = float("nan")
    for batch_idx, (data, target) in enumerate(train_loader):
        output = model(data)
        loss = F.nll_loss(output, target)
        accum_loss = accum_loss + loss / accum_steps
        if (batch_idx + 1) % accum_steps == 0:
            optimizer.zero_grad()
            accum_loss.backward()
            optimizer.step()
            last = accum_loss.item()
            accum_loss = 0.0
    return last


def test(model, test_loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            correct += model(data).argmax(dim=1).eq(target).sum().item()
    return correct / len(test_loader.dataset)


def main():
    torch.manual_seed(0)
    x = torch.randn(256, 20)
    y = (x[:, :4].argmax(dim=1))
    train_loader = DataLoader(TensorDataset(x[:192], y[:192]), batch_size=8, shuffle=True)
    test_loader = DataLoader(TensorDataset(x[192:], y[192:]), batch_size=64)
    model = Net()
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    for epoch in range(1, 3):
        loss = train(model, train_loader, optimizer, epoch)
        acc = test(model, test_loader)
        scheduler.step()
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {loss:.6f} acc {acc:.4f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
