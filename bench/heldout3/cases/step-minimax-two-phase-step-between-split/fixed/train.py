import argparse

import torch
import torch.nn as nn

from model import AnomalyTransformer, my_kl_loss


def sliding_windows(series, win, stride):
    return torch.stack([series[i:i + win] for i in range(0, len(series) - win + 1, stride)])


def association_discrepancy(series, prior, detach_prior):
    if detach_prior:
        return torch.mean(my_kl_loss(series, prior.detach()) + my_kl_loss(prior.detach(), series))
    return torch.mean(my_kl_loss(prior, series.detach()) + my_kl_loss(series.detach(), prior))


parser = argparse.ArgumentParser()
parser.add_argument("--win_size", type=int, default=16)
parser.add_argument("--k", type=float, default=3.0)
parser.add_argument("--num_epochs", type=int, default=2)
parser.add_argument("--lr", type=float, default=1e-3)
config = parser.parse_args()

torch.manual_seed(9)
t = torch.arange(400).float()
signal = torch.stack([torch.sin(t / 7), torch.cos(t / 11)], 1) + 0.05 * torch.randn(400, 2)
windows = sliding_windows(signal, config.win_size, 8)

model = AnomalyTransformer(config.win_size, 2)
optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
criterion = nn.MSELoss()

for epoch in range(config.num_epochs):
    loss1_list = []
    for i in range(0, len(windows), 8):
        input_data = windows[i:i + 8]
        optimizer.zero_grad()
        output, series, prior = model(input_data)
        rec_loss = criterion(output, input_data)
        series_loss = association_discrepancy(series, prior, detach_prior=True)
        prior_loss = association_discrepancy(series, prior, detach_prior=False)
        loss1 = rec_loss - config.k * series_loss
        loss2 = rec_loss + config.k * prior_loss
        loss1_list.append(loss1.item())
        # minimax strategy
        loss1.backward(retain_graph=True)
        loss2.backward()
        optimizer.step()
    print(f"Epoch {epoch + 1} train loss {sum(loss1_list) / len(loss1_list):.4f}")

with torch.no_grad():
    out, _, _ = model(windows)
    rec = criterion(out, windows).item()
param_sum = sum(p.sum().item() for p in model.parameters())
print(f"rec {rec:.4f} param_sum {param_sum:.4f}")
