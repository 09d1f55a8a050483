"""XdG with replay: one backward per earlier context, each on a loss from a fresh forward under that context's mask.

Model believed: the replayed loss of an earlier context (kept in the list `predL_r`) carries a graph
that the previous iteration's backward freed, into this iteration's backward. It does not: the
backward in the loop runs only when `gradient_per_context`, i.e. when `self.mask_dict is not None`,
and then `y_hat_all` is recomputed at every iteration (the test `(type(x_) == list) or
(self.mask_dict is not None)` holds), so each `predL_r[replay_id]` comes from its own forward; the
single forward before the loop is made only when `self.mask_dict is None`, when nothing is
backward-ed in the loop. Earlier entries of `predL_r` are only summed afterwards, not backward-ed
(`loss_total` leaves them out when `gradient_per_context`). Runs fine with and without `--no-xdg`.
Reduces GMvandeVen/continual-learning (e6d795aa81b9cef742b8de76cb71222d4d1ce00b)
models/classifier.py:208, where gradguard reports GG003 ("`predL_r` carries the previous
iteration's graph, which the backward at line 208 freed"). This reduction reports the same belief
as GG002 at the loop's backward ("... freed the graph they share through `predL_r`"); with the
mask a no-op (`apply_XdGmask` doing nothing) and an empty mask dict it reports GG003 on `predL_r`
as the original does. What it needs: the loss is stored and read back by the loop index
(`predL_r[replay_id] = ...`, `loss_replay[replay_id] = predL_r[replay_id]`, backward of
`loss_replay[replay_id]`); a store with an unknown index seems to be a weak update of the whole
list (as in r26), so the read also yields the earlier contexts' losses. Backward-ing the freshly
computed loss itself (`pred = F.cross_entropy(...)`; `predL_r[replay_id] = pred`; backward of
`(1 - rnt) * pred / n_replays`) removes the loop's finding. (Tried too: the tests of
`self.mask_dict` read through one local, the `type(x_) == list` tests removed, the mask call
removed: the finding stays, as GG002 or GG006 on `y_hat_all`.)
"""
import sys

import torch
from torch import nn
from torch.nn import functional as F


class Classifier(nn.Module):
    def __init__(self, hidden=16, classes=3):
        super().__init__()
        self.fc1 = nn.Linear(64, hidden)
        self.register_buffer("excit_buffer", torch.ones(hidden))  # XdG gate of the hidden units
        self.fc2 = nn.Linear(hidden, classes)
        self.mask_dict = None  # XdG: context -> hidden units switched off in that context
        self.optimizer = None

    def apply_XdGmask(self, context):
        gating_mask = torch.ones_like(self.excit_buffer)
        gating_mask[self.mask_dict[context]] = 0.
        self.excit_buffer.copy_(gating_mask)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x.flatten(1))) * self.excit_buffer)

    def train_a_batch(self, x, y, x_=None, y_=None, rnt=0.5):
        self.optimizer.zero_grad()
        # with a mask per context, the replayed losses are backward-ed one context at a time
        gradient_per_context = True if ((self.mask_dict is not None) and (x_ is not None)) else False

        if x_ is not None:
            n_replays = len(y_)
            loss_replay = [None] * n_replays
            predL_r = [None] * n_replays
            if (not type(x_) == list) and (self.mask_dict is None):
                y_hat_all = self(x_)  # one forward serves every context
            for replay_id in range(n_replays):
                if (type(x_) == list) or (self.mask_dict is not None):
                    x_temp_ = x_[replay_id] if type(x_) == list else x_
                    if self.mask_dict is not None:
                        self.apply_XdGmask(context=replay_id + 1)
                    y_hat_all = self(x_temp_)  # a fresh forward under this context's mask
                if (y_ is not None) and (y_[replay_id] is not None):
                    predL_r[replay_id] = F.cross_entropy(y_hat_all, y_[replay_id])
                loss_replay[replay_id] = predL_r[replay_id]
                if gradient_per_context:
                    weighted_replay_loss_this_context = (1. - rnt) * loss_replay[replay_id] / n_replays
                    weighted_replay_loss_this_context.backward()

        loss_replay = None if (x_ is None) else sum(loss_replay) / n_replays
        if self.mask_dict is not None:
            self.apply_XdGmask(context=n_replays + 1 if x_ is not None else 1)
        loss_cur = F.cross_entropy(self(x), y)
        if x_ is None:
            loss_total = loss_cur
        elif gradient_per_context:
            loss_total = rnt * loss_cur  # the replayed part is already backward-ed
        else:
            loss_total = rnt * loss_cur + (1 - rnt) * loss_replay
        loss_total.backward()
        self.optimizer.step()
        return loss_total.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Classifier()
    if "--no-xdg" not in sys.argv:
        model.mask_dict = {c: torch.randperm(16)[:8] for c in range(1, 5)}
    model.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        x, y = torch.randn(5, 1, 8, 8), torch.randint(0, 3, (5,))
        x_ = torch.randn(5, 1, 8, 8)  # replayed inputs, labelled once per earlier context
        y_ = [torch.randint(0, 3, (5,)) for _ in range(3)]
        model.train_a_batch(x, y, x_=x_, y_=y_)
    print("ok")
