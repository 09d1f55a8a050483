"""The trainer (the shape of glow/trainer.py): it receives the built graph and optimizer."""

import torch


class Trainer:
    def __init__(self, graph, optim):
        self.graph = graph
        self.optim = optim

    def train(self, batches=3):
        for _ in range(batches):
            x = torch.randn(4, 4, 8, 8)
            z, nll = self.graph(x=x)
            loss = nll.mean()
            self.graph.zero_grad()
            self.optim.zero_grad()
            loss.backward()
            self.optim.step()
