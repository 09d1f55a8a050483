"""Student-teacher regression: can a small MLP fit the function of a random larger MLP?"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def make_dataset(n, in_dim=8):
    ground_truth = nn.Sequential(nn.Linear(in_dim, 32), nn.Tanh(), nn.Linear(32, 1))
    X = torch.randn(n, in_dim)
    Y = ground_truth(X)
    return TensorDataset(X, Y)


def train(model, loader, optimizer, epochs=2):
    model.train()
    for epoch in range(epochs):
        running = 0.0
        for xb, yb in loader:
            pred = model(xb)
            loss = F.mse_loss(pred, yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item()
    return running / len(loader)


def evaluate(model, dataset):
    model.eval()
    X, Y = dataset.tensors
    with torch.no_grad():
        return F.mse_loss(model(X), Y).item()


def main():
    torch.manual_seed(0)
    dataset = make_dataset(256)
    loader = DataLoader(dataset, batch_size=32, shuffle=True)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    train_loss = train(model, loader, optimizer)
    full_mse = evaluate(model, dataset)
    param_sum = sum(p.sum().item() for p in model.parameters())
    print(f"final loss {train_loss:.6f} mse {full_mse:.6f} param_sum {param_sum:.6f}")


if __name__ == "__main__":
    main()
