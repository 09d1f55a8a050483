"""An object of one of several project classes (`Value.others`): a factory that picks a model by
name (`build(args.model)`), a container chosen in `__init__`. Each class's methods run on their own
copy of the state and the copies are joined; before, a join kept the first class only, so a bug in
the second (a recurrent model keeping `self.hidden` across batches) was never seen. A class all of
whose code is seen and that lacks the method called is not what the object is there.
Each program runs under torch as the test says.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst
from fixture_support import error_lines, run_programs

from gradguard.analysis.state import ClassInfo
from gradguard.analysis.values import FRESH, Kind, Value, join, members, same

MODELS = '''"""Two sequence classifiers; `build` picks one by name."""
import torch
from torch import nn


class ConvClassifier(nn.Module):
    def __init__(self, features=8, classes=3):
        super().__init__()
        self.conv = nn.Conv1d(features, 16, 3, padding=1)
        self.head = nn.Linear(16, classes)

    def forward(self, x):
        return self.head(torch.relu(self.conv(x.transpose(1, 2))).mean(2))


class RecurrentClassifier(nn.Module):
    def __init__(self, features=8, classes=3):
        super().__init__()
        self.rnn = nn.GRU(features, 16, batch_first=True)
        self.head = nn.Linear(16, classes)
        self.hidden = None

    def forward(self, x):
        out, self.hidden = self.rnn(x, self.hidden)
        CARRY
        return self.head(out[:, -1])


def build(name, **kwargs):
    if name == "conv":
        return ConvClassifier(**kwargs)
    if name == "gru":
        return RecurrentClassifier(**kwargs)
    raise ValueError(f"unknown model {name}")
'''

TRAIN = '''"""Train the classifier the command line names on random sequences."""
import argparse

import torch
import torch.nn.functional as F

from models import build


def train(model, batches, optimizer):
    model.train()
    for x, y in batches:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="gru", choices=["conv", "gru"])
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = build(args.model, features=8, classes=3)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    batches = [(torch.randn(4, 10, 8), torch.randint(0, 3, (4,))) for _ in range(3)]
    for epoch in range(args.epochs):
        print(epoch, train(model, batches, optimizer))
    print("ok")


if __name__ == "__main__":
    main()
'''

CARRIED = "        CARRY\n"
DETACHED = "        self.hidden = self.hidden.detach()\n"


def _program(tmp_path: Path, name: str, carry: str, swapped: bool = False) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    models = MODELS.replace(CARRIED, carry)
    if swapped:
        # The recurrent model first: whichever class a join kept first, both are followed.
        conv = '    if name == "conv":\n        return ConvClassifier(**kwargs)\n'
        models = models.replace(conv, "").replace("    raise ValueError", conv + "    raise ValueError")
    (folder / "models.py").write_text(models, encoding="utf-8")
    (folder / "train.py").write_text(TRAIN, encoding="utf-8")
    return folder / "train.py"


def test_a_model_picked_by_name_is_each_class_it_may_be(tmp_path: Path) -> None:
    for swapped in (False, True):
        assert error_lines(_program(tmp_path, f"carried_{swapped}", "", swapped)) == [("GG003", "loss.backward()")]
        assert error_lines(_program(tmp_path, f"detached_{swapped}", DETACHED, swapped)) == []


def test_the_programs_behave_under_torch(tmp_path: Path) -> None:
    carried, detached = _program(tmp_path, "carried", ""), _program(tmp_path, "detached", DETACHED)
    ended = run_programs({carried: [], detached: [], _program(tmp_path, "conv", ""): ["--model", "conv"]})
    assert "backward through the graph a second time" in (ended[carried].error_message or "")
    assert ended[detached].ok and ended[detached].stdout.strip().endswith("ok"), ended[detached].traceback
    assert ended[tmp_path / "conv" / "train.py"].ok


def _class(name: str) -> ClassInfo:
    return ClassInfo(cst.ClassDef(cst.Name(name), cst.IndentedBlock([])), name)


def test_join_keeps_one_object_per_class() -> None:
    """The model itself: a join of objects of two classes keeps both; of the same class, one."""
    a, b = _class("A"), _class("B")
    one, other = Value(Kind.INSTANCE, ref=a, alloc="f.x"), Value(Kind.INSTANCE, ref=b)
    both = join(one, other)
    assert both.kind is Kind.INSTANCE and both.ref is a and [m.ref for m in members(both)] == [a, b]
    assert [m.ref for m in members(join(both, Value(Kind.INSTANCE, ref=b, nodes=frozenset({12}))))] == [a, b]
    assert join(both, Value(Kind.INSTANCE, ref=b, nodes=frozenset({12}))).nodes == frozenset({12})
    assert join(one, Value(Kind.INSTANCE, ref=a)).others == ()
    assert same(both, join(one, other)) and not same(both, one)
    assert join(both, FRESH).kind is Kind.UNKNOWN  # an object or a tensor: nothing known
