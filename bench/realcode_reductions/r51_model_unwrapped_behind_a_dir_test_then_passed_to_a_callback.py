"""robustness's CLI: a wrapper module unwrapped by `model.module` behind a test that is false, then
handed to an optional regulariser callback in another module's training loop.

Model believed: "`model` was computed once from tensors that require grad; the backward at
r51_helpers_train.py freed its graph, and this iteration uses it again" (GG006 at the call of
`train_model`). `model` is an `nn.Module` throughout: `AttackerModel` has no attribute `module`, so
`'module' in dir(model)` is false and the model is never unwrapped (it would be a module too, were
it a `DataParallel`); `model.train()` returns the module itself; the regulariser is a user hook that
the command line never sets (`has_attr(args, "regularizer")` is false). Runs fine. The finding needs
all of: the unwrap behind the test (`'module' in dir(model)` or `hasattr(model, 'module')`; without
it: clean), a class of the program's own (a plain `nn.Linear`: clean), the training loop in an
imported module (the same functions in this file: clean), `model = model.train() if is_train else
model.eval()` (an `if` calling `model.train()`: clean), `model` passed to the callback
(`args.regularizer(inp, target)`: clean) and no regulariser anywhere in the program (a `def` of one,
or `args.regularizer = lambda model, inp, target: ...` under an option: clean, and such a run is
fine too: the penalty is a fresh graph each iteration). Reduces
MadryLab/robustness (a9541241defd9972e9334bfcdb804f6aefe24dc7) robustness/main.py:55 (GG006, at
`eval_model(...)`; with `eval_model` removed, at `train_model(...)`): main.py's `if 'module' in
dir(model): model = model.module` after `make_and_restore_model`, train.py's `_model_loop`
(`has_attr(args, "regularizer")`, `reg_term = args.regularizer(model, inp, target)`).
"""
from argparse import ArgumentParser

import torch as ch

from r51_helpers_train import train_model


class AttackerModel(ch.nn.Module):
    def __init__(self, model):
        super(AttackerModel, self).__init__()
        self.model = model

    def forward(self, inp, target=None, make_adv=False):
        output = self.model(inp)
        return (output, inp)


def main(args, store=None):
    train_loader = [(ch.randn(4, 3), ch.randint(0, 10, (4,))) for _ in range(3)]
    val_loader = train_loader
    loaders = (train_loader, val_loader)

    model, checkpoint = AttackerModel(ch.nn.Linear(3, 10)), None
    if 'module' in dir(model): model = model.module

    model = train_model(args, model, loaders, store=store, checkpoint=checkpoint)
    return model


if __name__ == "__main__":
    p = ArgumentParser()
    p.add_argument('--epochs', type=int, default=2)
    p.add_argument('--lr', type=float, default=0.1)
    args = p.parse_args()
    final_model = main(args, store=None)
    print("ok")
