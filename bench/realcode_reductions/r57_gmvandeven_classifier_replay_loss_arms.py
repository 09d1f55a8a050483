"""Reduction of GMvandeVen/continual-learning models/classifier.py:304 and models/classifier_stream.py:272
(GG002 at 02d3de9, GG001 before it; false; the record's r47 shape, which r47 itself no longer shows).

models/classifier.py's `train_a_batch`, cut down. `loss_replay.backward()` runs only when
`use_replay in ('inequality', 'both')` (and not per context); `loss_total` takes `loss_replay` only in
the last arm, reached when `use_replay` is neither 'inequality' nor 'both'. So no path backward-s
`loss_replay`'s graph twice. The method is analysed on its own (as in the repository, where the model is
built elsewhere): the main block reaches it by name. Runs under torch for every option.
"""
import torch
from torch import nn
from torch.nn import functional as F


class lf:
    @staticmethod
    def to_one_hot(y, classes):
        return F.one_hot(y, classes).float()



class ContinualLearner(nn.Module):
    def __init__(self):
        super().__init__()
        self.optimizer = None
        self.scenario = 'task'
        self.replay_targets = "hard"
        self.KD_temp = 2.
        self.use_replay = "normal"
        self.lwf_weighting = False
        self.mask_dict = None


class Classifier(ContinualLearner):
    def __init__(self):
        super().__init__()
        self.convE = nn.Identity()
        self.fcE = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
        self.classifier = nn.Linear(16, 3)
        self.binaryCE = False
        self.binaryCE_distill = False

    def forward(self, x):
        return self.classifier(self.fcE(self.convE(x)))

    def train_a_batch(self, x, y, scores=None, x_=None, y_=None, scores_=None, rnt=0.5, active_classes=None, **kwargs):
        self.train()
        self.optimizer.zero_grad()
        gradient_per_context = True if ((self.mask_dict is not None) and (x_ is not None)) else False
        if x_ is not None:
            PerContext = (type(y_)==list) if (y_ is not None) else (type(scores_)==list)
            if not PerContext:
                y_ = [y_]
                scores_ = [scores_]
                active_classes = [active_classes] if (active_classes is not None) else None
            n_replays = len(y_) if (y_ is not None) else len(scores_)
            loss_replay = [None]*n_replays
            predL_r = [None]*n_replays
            distilL_r = [None]*n_replays
            if (not type(x_)==list) and (self.mask_dict is None):
                y_hat_all = self(x_)
            for replay_id in range(n_replays):
                if (type(x_)==list) or (self.mask_dict is not None):
                    x_temp_ = x_[replay_id] if type(x_)==list else x_
                    y_hat_all = self(x_temp_)
                y_hat = y_hat_all if (active_classes is None) else y_hat_all[:, active_classes[replay_id]]
                if (y_ is not None) and (y_[replay_id] is not None):
                    predL_r[replay_id] = F.cross_entropy(y_hat, y_[replay_id], reduction='mean')
                if self.replay_targets=="hard":
                    loss_replay[replay_id] = predL_r[replay_id]
                if gradient_per_context:
                    weight = 1. if self.use_replay=='inequality' else (1.-rnt)
                    weighted_replay_loss_this_context = weight * loss_replay[replay_id] / n_replays
                    weighted_replay_loss_this_context.backward()
        loss_replay = None if (x_ is None) else sum(loss_replay)/n_replays
        if self.use_replay in ('inequality', 'both') and x_ is not None:
            if not gradient_per_context:
                if self.use_replay == 'both':
                    loss_replay = (1-rnt) * loss_replay
                loss_replay.backward()
            if self.use_replay=='inequality':
                self.optimizer.zero_grad()
        if x is not None:
            y_hat = self(x)
            if self.binaryCE:
                binary_targets = lf.to_one_hot(y.cpu(), y_hat.size(1)).to(y.device)
                if self.binaryCE_distill and (scores is not None):
                    binary_targets[:,:scores.size(1)] = torch.sigmoid(scores / self.KD_temp)
                predL = None if y is None else F.binary_cross_entropy_with_logits(
                    input=y_hat, target=binary_targets, reduction='none'
                ).sum(dim=1).mean()
            else:
                predL = None if y is None else F.cross_entropy(input=y_hat, target=y, reduction='mean')
            loss_cur = predL
        else:
            predL = None
        if x_ is None or self.use_replay=='inequality':
            loss_total = loss_cur
        elif gradient_per_context or self.use_replay=='both':
            loss_total = rnt*loss_cur
        else:
            loss_total = loss_replay if (x is None) else rnt*loss_cur+(1-rnt)*loss_replay
        loss_total.backward()
        self.optimizer.step()
        return loss_total.item()


if __name__ == "__main__":
    for use_replay in ("normal", "inequality", "both"):
        model = Classifier()
        model.use_replay = use_replay
        model.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        step = getattr(model, "train_" + "a_batch")
        for _ in range(3):
            step(torch.randn(4, 6), torch.randint(0, 3, (4,)), x_=torch.randn(4, 6), y_=torch.randint(0, 3, (4,)))
            step(torch.randn(4, 6), torch.randint(0, 3, (4,)))
    print("ok")
