"""Train a small temporal convolutional network (legacy weight_norm convolutions, as in the TCN
paper's code) to predict the next value of a noisy sine, with a smoothness penalty on the first
layer's kernels."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import weight_norm
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

N_WINDOWS = 64
WINDOW = 16
CHANNELS = 8
EPOCHS = 2
BATCH_SIZE = 16
SMOOTHNESS = 1e-2


class CausalBlock(nn.Module):
    def __init__(self, in_channels, out_channels, dilation):
        super().__init__()
        self.pad = 2 * dilation
        self.conv = weight_norm(nn.Conv1d(in_channels, out_channels, 3, dilation=dilation))

    def forward(self, x):
        return torch.relu(self.conv(F.pad(x, (self.pad, 0))))


class TCN(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.blocks = nn.Sequential(CausalBlock(1, channels, 1), CausalBlock(channels, channels, 2))
        self.head = nn.Conv1d(channels, 1, 1)

    def forward(self, x):
        return self.head(self.blocks(x))


t = torch.arange(N_WINDOWS * WINDOW + 1).float()
series = torch.sin(0.3 * t) + 0.1 * torch.randn_like(t)
windows = series[:-1].reshape(N_WINDOWS, 1, WINDOW)
targets = series[1:].reshape(N_WINDOWS, 1, WINDOW)
loader = DataLoader(TensorDataset(windows, targets), batch_size=BATCH_SIZE, shuffle=True)

model = TCN(CHANNELS)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
first_kernels = model.blocks[0].conv.weight

for epoch in range(EPOCHS):
    total = 0.0
    for step, (xb, yb) in enumerate(loader):
        prediction = model(xb)
        smoothness = (first_kernels[..., 1:] - first_kernels[..., :-1]).pow(2).mean()
        loss = F.mse_loss(prediction, yb) + SMOOTHNESS * smoothness
        opt.zero_grad()
        if step % 1 == 0:
            loss.backward()  # expect: GG006
        opt.step()
        total += loss.item()
    print(f"epoch {epoch}: {total / len(loader):.6f}")

print(f"{loss.item():.6f}")
