"""Student fits a random teacher network; the dataset is generated without autograd."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


@torch.no_grad()
def make_dataset(n, in_dim=8):
    teacher = nn.Sequential(nn.Linear(in_dim, 32), nn.Tanh(), nn.Linear(32, 1))
    X = torch.randn(n, in_dim)
    return TensorDataset(X, teacher(X))


def train(model, loader, optimizer, epochs=2):
    for epoch in range(epochs):
        running = 0.0
        for xb, yb in loader:
            loss = F.mse_loss(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item()
    return running / len(loader)


def main():
    torch.manual_seed(0)
    dataset = make_dataset(256)
    loader = DataLoader(dataset, batch_size=32, shuffle=True)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss = train(model, loader, optimizer)
    X, Y = dataset.tensors
    with torch.no_grad():
        mse = F.mse_loss(model(X), Y).item()
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {loss:.6f} mse {mse:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
