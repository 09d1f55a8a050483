import torch
from torch.utils.data import DataLoader, TensorDataset


def make_loaders(n_train=192, n_val=64, n_in=10, n_classes=3, batch_size=16):
    w = torch.randn(n_in, n_classes)
    x = torch.randn(n_train + n_val, n_in)
    y = (x @ w + 0.3 * torch.randn(n_train + n_val, n_classes)).argmax(1)
    train = TensorDataset(x[:n_train], y[:n_train])
    val = TensorDataset(x[n_train:], y[n_train:])
    return DataLoader(train, batch_size=batch_size, shuffle=True), DataLoader(val, batch_size=64)
