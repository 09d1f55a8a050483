"""A task chosen on the command line, tested three ways in each iteration, with an update every few steps.

Model believed: `crossent` (bound under `if args.task in ['classification', 'hybrid']:`) still holds the
previous iteration's graph when `loss = bpd + crossent` runs on a path where the task is neither
'density' nor 'classification', and the backward would go through it again (GG003 on `x`, the
flow's hidden state). Six paths are feasible (three tasks, an update or not), more than the
analysis keeps apart, so it forgot conditions: it forgot the membership test first, because the
two equalities already decide it, and then one of those, which left a path that had forgotten
both what the task is and that `crossent` was never bound on it. On every real path the task is
one of the three, and `crossent` is bound exactly when it is read. Runs fine. Reduces
rtqichen/residual-flows (8170138c850a3574319491d97093bc860ce4922d) train_img.py:640 (GG003 on `x`,
ResidualFlow.forward in resflows/resflow.py:195).
"""
import argparse
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.net = nn.Linear(dim, dim)

    def forward(self, x, logpx=None):
        y = x + self.net(x)
        if logpx is None:
            return y
        return y, logpx - y.sum(1)


class Flow(nn.Module):
    def __init__(self, dim, n, factor_out=False):
        super().__init__()
        self.factor_out = factor_out
        self.transforms = nn.ModuleList([Block(dim) for _ in range(n)])
        self.classification_heads = nn.ModuleList([nn.Linear(dim, dim) for _ in range(n)])
        self.logit_layer = nn.Linear(dim * n, 3)

    def forward(self, x, logpx=None, classify=False):
        out = []
        class_outs = []
        for idx in range(len(self.transforms)):
            if logpx is not None:
                x, logpx = self.transforms[idx].forward(x, logpx)
            else:
                x = self.transforms[idx].forward(x)
            if self.factor_out and (idx < len(self.transforms) - 1):
                d = x.size(1) // 2
                x, f = x[:, :d], x[:, d:]
                out.append(f)
            if classify:
                if self.factor_out:
                    class_outs.append(self.classification_heads[idx](f))
                else:
                    class_outs.append(self.classification_heads[idx](x))
        out.append(x)
        out = torch.cat([o.view(o.size()[0], -1) for o in out], 1)
        output = out if logpx is None else (out, logpx)
        if classify:
            h = torch.cat(class_outs, dim=1)
            logits = self.logit_layer(h)
            return output, logits
        else:
            return output

parser = argparse.ArgumentParser()
parser.add_argument("--task", choices=["density", "classification", "hybrid"], default="hybrid")
parser.add_argument("--update-freq", type=int, default=1)
args = parser.parse_args()

model = Flow(4, 3)
optimizer = torch.optim.Adam(model.parameters())
criterion = nn.CrossEntropyLoss()
train_loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(4)]


def compute_loss(x, model):
    zero = torch.zeros(x.shape[0], 1)
    (z, delta_logp), logits = model(x, zero, classify=True)
    bpd = (z ** 2).sum(1).mean() + delta_logp.mean()
    return bpd, logits


def train(epoch, model):
    model.train()
    for i, (x, y) in enumerate(train_loader):
        global_itr = epoch * len(train_loader) + i
        bpd, logits = compute_loss(x, model)
        if args.task in ['classification', 'hybrid']:
            crossent = criterion(logits, y)
        if args.task == 'density':
            loss = bpd
        elif args.task == 'classification':
            loss = crossent
        else:
            loss = bpd + crossent
        loss.backward()
        if global_itr % args.update_freq == args.update_freq - 1:
            optimizer.step()
            optimizer.zero_grad()


for epoch in range(3):
    train(epoch, model)
