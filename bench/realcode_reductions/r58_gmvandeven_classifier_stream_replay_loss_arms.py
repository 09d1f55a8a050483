"""Reduction of GMvandeVen/continual-learning models/classifier_stream.py:272 GG002 (false).

`loss_replay.backward()` runs only under `use_replay in ('inequality', 'both')`; `loss_total` adds
`loss_replay` only in the last arm, where `use_replay` is neither. This program (driven from main over
the three options, with and without replayed data) is clean at 94425bf and flagged from 34555a6 on
(conditional expressions decided by the path: `loss_replay = None if (x_ is None) else loss_replay`
after an arm that may leave it unbound). In the repository the same line was GG001 before 02d3de9.
"""
import torch
from torch import nn
from torch.nn import functional as F


class ContinualLearner(nn.Module):
    def __init__(self):
        super().__init__()
        self.optimizer = None
        self.replay_targets = "hard"
        self.use_replay = "normal"   # normal|inequality|both
        self.weight_penalty = False
        self.reg_strength = 0


class Classifier(ContinualLearner):
    def __init__(self):
        super().__init__()
        self.fcE = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
        self.classifier = nn.Linear(16, 3)

    def forward(self, x):
        return self.classifier(self.fcE(x))

    def train_a_batch(self, x, y, x_=None, y_=None, rnt=0.5):
        self.train()
        self.optimizer.zero_grad()

        if x_ is not None:
            y_hat = self(x_)
            predL_r = F.cross_entropy(y_hat, y_, reduction='mean')
            if self.replay_targets == "hard":
                loss_replay = predL_r
        loss_replay = None if (x_ is None) else loss_replay

        if self.use_replay in ('inequality', 'both') and x_ is not None:
            if self.use_replay == 'both':
                loss_replay = (1 - rnt) * loss_replay
            loss_replay.backward()
            grad_rep = torch.cat([p.grad.data.view(-1) for p in self.parameters() if p.requires_grad])
            if self.use_replay == 'inequality':
                self.optimizer.zero_grad()

        y_hat = self(x)
        loss_cur = F.cross_entropy(input=y_hat, target=y, reduction='mean')

        if x_ is None or self.use_replay == 'inequality':
            loss_total = loss_cur
        elif self.use_replay == 'both':
            loss_total = rnt * loss_cur
        else:
            loss_total = rnt * loss_cur + (1 - rnt) * loss_replay

        loss_total.backward()

        if self.use_replay in ('inequality', 'both') and x_ is not None:
            grad_cur = torch.cat([p.grad.view(-1) for p in self.parameters() if p.requires_grad])
            angle = (grad_cur * grad_rep).sum()
            if angle < 0:
                grad_proj = grad_cur - (angle / (grad_rep * grad_rep).sum()) * grad_rep
                index = 0
                for p in self.parameters():
                    if p.requires_grad:
                        n_param = p.numel()
                        p.grad.copy_(grad_proj[index:index + n_param].view_as(p))
                        index += n_param
        self.optimizer.step()
        return loss_total.item()


if __name__ == "__main__":
    for use_replay in ("normal", "inequality", "both"):
        model = Classifier()
        model.use_replay = use_replay
        model.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        for step in range(3):
            x, y = torch.randn(4, 6), torch.randint(0, 3, (4,))
            x_, y_ = torch.randn(4, 6), torch.randint(0, 3, (4,))
            model.train_a_batch(x, y, x_=x_, y_=y_)
            model.train_a_batch(x, y)
    print("ok")
