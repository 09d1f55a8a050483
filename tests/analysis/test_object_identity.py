"""Objects of one class made at different places are different objects to the conditions over their
attributes, and a parameter bound to a literal is decided by the literal's truth.

StyleGAN2's `EqualLinear` is built with `activation="fused_lrelu"` in the mapping network and with
no activation in every modulation; its forward tests `if self.activation:`. Conditions named by the
class and variable name alone took the layers for one object whose flag the paths disagreed on, and
every statement of the training loop was run again once per truth of it (`Interpreter.split_parts`).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

from gradguard.analysis import analyze
from gradguard.analysis import interpreter as interp
from gradguard.analysis.state import ClassInfo
from gradguard.analysis.values import Kind, Value

_GENERATOR = '''
import torch
import torch.nn as nn


class EqualLinear(nn.Module):
    def __init__(self, dim, activation=None):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim, dim))
        self.activation = activation
        self.scale = None

    def forward(self, x):
        if self.activation:
            return torch.relu(x @ self.weight)
        SCALE
        return x @ self.weight / scale


class Modulated(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.modulation = EqualLinear(dim)

    def forward(self, x):
        return self.modulation(x)


class Generator(nn.Module):
    def __init__(self, dim, depth=3):
        super().__init__()
        layers = []
        for _ in range(depth):
            layers.append(EqualLinear(dim, activation="lrelu"))
        self.mapping = nn.Sequential(*layers)
        self.convs = nn.ModuleList([Modulated(dim) for _ in range(2)])

    def forward(self, z):
        h = self.mapping(z)
        for conv in self.convs:
            h = conv(h)
        return h


def train(generator, steps):
    optimizer = torch.optim.SGD(generator.parameters(), lr=0.01)
    for step in range(steps):
        loss = generator(torch.randn(2, 4)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 10 == 0:
            print(step, loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    train(Generator(4), 20)
    print("ok")
'''

# The modulation's scale, computed once from its weight and kept: the second backward goes through
# the first one's graph. The fix computes it at every call.
_PER_CALL = _GENERATOR.replace("SCALE", "scale = self.weight.norm()")


def _memoised() -> str:
    return _GENERATOR.replace(
        "        SCALE\n",
        "        if self.scale is None:\n            self.scale = self.weight.norm()\n        scale = self.scale\n")


def _line_of(source: str, text: str) -> int:
    return next(n for n, line in enumerate(source.splitlines(), 1) if text in line)


def test_a_layer_built_with_and_without_a_flag_is_two_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    split: list[str] = []
    original = interp.Interpreter.note_splits

    def note_splits(self: interp.Interpreter, states: list, results: list | None = None) -> None:
        before = set(self.split_atoms)
        original(self, states, results)
        split.extend(set(self.split_atoms) - before)

    monkeypatch.setattr(interp.Interpreter, "note_splits", note_splits)
    source = _memoised()
    # The memo is found at the backward (as GG003 naming the local `scale` it is read into: the
    # carrier's wording is not what this test is about).
    assert [d.span.start.row for d in analyze(source)] == [_line_of(source, "loss.backward()")]
    assert not [key for key in split if key.endswith("EqualLinear.activation")]
    assert analyze(_PER_CALL) == ()


def test_the_truth_of_a_literal_bound_to_a_parameter() -> None:
    def truth(text: str) -> bool | None:
        return interp._literal_truth(cst.parse_expression(text))

    assert [truth(t) for t in ("True", "False", "None", '"lrelu"', '""', "0", "0.0", "2", "1e-3")] == [
        True, False, False, True, False, False, False, True, True]
    assert [truth(t) for t in ("f'{x}'", "activation", "-1", "[]")] == [None, None, None, None]


def test_conditions_over_objects_name_where_they_were_made() -> None:
    info = ClassInfo(cst.parse_statement("class EqualLinear:\n    pass\n"), "EqualLinear")  # type: ignore[arg-type]
    mapping = Value(Kind.INSTANCE, ref=info, label="EqualLinear", alloc="Generator.__init__:31")
    modulation = Value(Kind.INSTANCE, ref=info, label="EqualLinear", alloc="Modulated.modulation")
    assert interp.object_atom_key(mapping, "activation") != interp.object_atom_key(modulation, "activation")
    assert interp.object_atom_key(mapping, "activation") == interp.object_atom_key(mapping, "activation")


def test_the_programs_behave_under_torch(tmp_path: Path) -> None:
    (tmp_path / "memoised.py").write_text(_memoised(), encoding="utf-8")
    (tmp_path / "per_call.py").write_text(_PER_CALL, encoding="utf-8")
    buggy = subprocess.run([sys.executable, "memoised.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert buggy.returncode != 0 and "backward through the graph a second time" in buggy.stderr
    fixed = subprocess.run([sys.executable, "per_call.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert fixed.returncode == 0 and fixed.stdout.strip().endswith("ok")
