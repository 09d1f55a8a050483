"""A-GEM replay: the replayed loss is backward-ed on its own only when it is not part of the total loss.

Model believed: `loss_total.backward()` goes through `loss_replay`'s graph after `loss_replay.backward()`
freed it ("it fails the first time `self.use_replay in ('inequality', 'both') and x_ is not None`
holds"). It never does: `loss_replay` is backward-ed alone only when `use_replay` is 'inequality'
or 'both' (A-GEM's reference gradient), and `loss_total` takes `loss_replay` only in the last arm,
reached when `use_replay` is neither 'inequality' nor 'both'; in the other two arms `loss_total` is
(a multiple of) `loss_cur`, a fresh forward of `x`. Runs fine in all three modes. Reduces
GMvandeVen/continual-learning (e6d795aa81b9cef742b8de76cb71222d4d1ce00b) models/classifier_stream.py:272
(GG001 "`loss_total` is backward-ed again, but the backward at line 204 already freed its graph");
models/classifier.py:304 is the same shape with more arms. Here the rule is GG002 (same belief,
"freed the graph they share"). The finding needs the feature extractor's shape from
models/conv/nets.py: a pooling module that is one of two classes and a forward that returns a
tuple or a tensor depending on `return_lists`; with either made unconditional, it disappears
(the method itself is unchanged), so the correlated tests of `self.use_replay` seem to be
forgotten when the calls' return values multiply the paths.
"""
import torch
from torch import nn
from torch.nn import functional as F


class Identity(nn.Module):
    def forward(self, x):
        return x


class ConvLayer(nn.Module):
    def __init__(self, in_planes, out_planes):
        super().__init__()
        self.conv = nn.Conv2d(in_planes, out_planes, kernel_size=3, padding=1)
        self.nl = nn.ReLU()

    def forward(self, x, return_pa=False):
        pre_activ = self.conv(x)
        output = self.nl(pre_activ)
        return output, pre_activ


class ConvLayers(nn.Module):
    def __init__(self, image_channels=1, depth=2, channels=4, global_pooling=False):
        super().__init__()
        self.depth = depth
        for layer_id in range(1, depth + 1):
            in_channels = image_channels if layer_id == 1 else channels
            setattr(self, 'convLayer{}'.format(layer_id), ConvLayer(in_channels, channels))
        self.pooling = nn.AdaptiveAvgPool2d((1, 1)) if global_pooling else Identity()

    def forward(self, x, return_lists=False):
        if return_lists:
            hidden_act_list, pre_act_list = [], []
        for layer_id in range(1, self.depth + 1):
            (x, pre_act) = getattr(self, 'convLayer{}'.format(layer_id))(x, return_pa=True)
            if return_lists:
                pre_act_list.append(pre_act)
                hidden_act_list.append(x)
        x = self.pooling(x)
        return (x, hidden_act_list, pre_act_list) if return_lists else x


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.convE = ConvLayers(global_pooling=True)
        self.classifier = nn.Linear(4, 3)
        self.use_replay = "normal"  # normal | inequality (A-GEM) | both
        self.optimizer = None

    def forward(self, x):
        return self.classifier(self.convE(x).flatten(1))

    def train_a_batch(self, x, y, x_=None, y_=None, rnt=0.5):
        self.optimizer.zero_grad()
        if x_ is not None:
            loss_replay = F.cross_entropy(self(x_), y_)

        # the replayed loss is backward-ed here only when it is used as a constraint (A-GEM) ...
        if self.use_replay in ('inequality', 'both') and x_ is not None:
            if self.use_replay == 'both':
                loss_replay = (1 - rnt) * loss_replay
            loss_replay.backward()
            grad_rep = torch.cat([p.grad.view(-1).clone() for p in self.parameters()])
            if self.use_replay == 'inequality':
                self.optimizer.zero_grad()

        loss_cur = F.cross_entropy(self(x), y)
        # ... and enters loss_total only when it was not
        if x_ is None or self.use_replay == 'inequality':
            loss_total = loss_cur
        elif self.use_replay == 'both':
            loss_total = rnt * loss_cur
        else:
            loss_total = rnt * loss_cur + (1 - rnt) * loss_replay
        loss_total.backward()
        self.optimizer.step()
        return loss_total.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    for mode in ("normal", "inequality", "both"):
        model = Classifier()
        model.use_replay = mode
        model.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(5, 1, 8, 8), torch.randint(0, 3, (5,))
        x_, y_ = torch.randn(5, 1, 8, 8), torch.randint(0, 3, (5,))
        model.train_a_batch(x, y, x_=x_, y_=y_)
    print("ok")
