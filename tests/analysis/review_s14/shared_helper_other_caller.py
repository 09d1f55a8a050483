"""Pretraining script; `finetune` is imported by finetune.py."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def optimize(loss, opt):
    opt.zero_grad()
    loss.backward()
    opt.step()


def pretrain(model, data):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for x, y in data:
        optimize(F.mse_loss(model(x), y), opt)


def finetune(model, head, data):
    opt = torch.optim.Adam(head.parameters(), lr=1e-4)
    feats = model(data[0][0])          # features computed once, with the backbone's graph
    for _, y in data:
        optimize(F.mse_loss(head(feats), y), opt)


if __name__ == "__main__":
    net = nn.Linear(4, 4)
    pretrain(net, [(torch.randn(8, 4), torch.randn(8, 4)) for _ in range(10)])
