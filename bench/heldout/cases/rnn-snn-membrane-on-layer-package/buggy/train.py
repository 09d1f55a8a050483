"""Rate-coded spiking MLP on a synthetic two-class problem."""
import torch
import torch.nn.functional as F

from spiking.net import SpikingMLP

torch.manual_seed(0)

BATCH = 16
N_IN, N_HIDDEN, N_OUT = 12, 32, 2


def make_data(n):
    x = torch.rand(n, N_IN)
    y = (x[:, :6].sum(1) > x[:, 6:].sum(1)).long()
    return x, y


def batches(x, y, size):
    for i in range(0, x.size(0), size):
        yield x[i:i + size], y[i:i + size]


def rate_loss(spk_rec, y):
    # spike counts over time act as logits
    return F.cross_entropy(spk_rec.sum(0), y)


x_train, y_train = make_data(64)
net = SpikingMLP(N_IN, N_HIDDEN, N_OUT)
optimizer = torch.optim.Adam(net.parameters(), lr=5e-3, betas=(0.9, 0.999))

loss_hist = []
for epoch in range(2):
    for x, y in batches(x_train, y_train, BATCH):
        spk_rec = net(x)
        loss = rate_loss(spk_rec, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        loss_hist.append(loss.item())

param_sum = sum(p.sum().item() for p in net.parameters())
print(f"final loss {loss_hist[-1]:.6f} param_sum {param_sum:.6f}")
