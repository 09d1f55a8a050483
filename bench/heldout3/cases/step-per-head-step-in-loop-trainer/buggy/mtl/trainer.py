import itertools

import torch
import torch.nn.functional as F


def task_loss(task, out, target):
    if task == "age":
        return F.mse_loss(out.squeeze(-1), target)
    return F.cross_entropy(out, target)


class MultiHeadTrainer:
    def __init__(self, encoder, heads, lr=3e-3):
        self.encoder, self.heads = encoder, heads
        params = itertools.chain(encoder.parameters(), heads.parameters())
        self.opt = torch.optim.Adam(params, lr=lr)
        self.history = {t: [] for t in heads}

    def step(self, x, targets):
        features = self.encoder(x)
        for task, head in self.heads.items():
            self.opt.zero_grad()
            loss = task_loss(task, head(features), targets[task])
            loss.backward(retain_graph=True)
            self.opt.step()
            self.history[task].append(loss.item())

    @torch.no_grad()
    def evaluate(self, x, targets):
        f = self.encoder(x)
        return {t: task_loss(t, h(f), targets[t]).item() for t, h in self.heads.items()}
