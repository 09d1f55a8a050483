"""The training loop (the shape of NNR's trainer.py): the model arrives from the caller."""

import torch
from torch import nn


class Trainer:
    def __init__(self, model, config):
        self.model = model
        self.config = config
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.loss = nn.CrossEntropyLoss()

    def train(self):
        c = self.config
        for batch in range(3):
            history = torch.randint(0, c["num_news"], (4, 6))
            graph = torch.rand(4, 6, 6)
            candidates = torch.randint(0, c["num_news"], (4, 5))
            logits = self.model(history, graph, candidates)
            loss = self.loss(logits, torch.zeros(4, dtype=torch.long))
            self.optimizer.zero_grad()
            loss.backward()  # buggy: the in-place error is raised here, first batch
            self.optimizer.step()
