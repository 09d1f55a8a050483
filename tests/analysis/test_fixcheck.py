"""Every fix is checked before it is offered: a fix that would leave a name unbound, not parse, or
not make its finding disappear is withheld, and the finding says in words what to do instead.
Also the edits that are right for the types and scopes involved (tuple and float state, distributions,
code moved into a loop, a method's definition re-read through the object)."""

from __future__ import annotations

import ast
from pathlib import Path

from gradguard.causes import Cause, Evidence, FixKind, fix_kind, reads_grads
from gradguard.config import Selection
from gradguard.engine import Prepared
from gradguard.fixcheck import (
    by_hand,
    new_scope_problems,
    plain_findings,
    refusal,
    scope_problems,
)
from gradguard.fixes import fix_prepared
from gradguard.model import Edit, Fix, Location, Span
from gradguard.rules import decisions_for

ALL = Selection(select=("GG",), ignore=())

CARRIED = """\
import torch

cell = torch.nn.RNNCell(3, 4)
opt = torch.optim.SGD(cell.parameters(), lr=0.1)
h = torch.zeros(2, 4)
for step in range(3):
    h = cell(torch.randn(2, 3), h)
    loss = h.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def fixed(source: str) -> tuple[str, tuple]:
    result, remaining, _, note = fix_prepared(Prepared("train.py", source, "utf-8"), ALL, unsafe=True)
    assert note is None, note
    return result.source, remaining


def test_the_scope_check_sees_self_outside_a_method_and_a_use_before_its_assignment() -> None:
    source = "def f():\n    for i in range(2):\n        y = w + 1\n        w = i\n\nprint(self.x)\n"
    assert scope_problems(source) == {"w": 1, "self": 1}
    assert new_scope_problems("x = 1\nprint(x)\n", "print(x)\nx = 1\n") == ["x"]
    assert new_scope_problems("import torch\n", "import torch\ntorch.zeros(1)\nlen([])\n") == []


def _with_fix(source: str, row: int, line: str):  # type: ignore[no-untyped-def]
    """The one finding of `source`, its fix replaced by inserting `line` before `row`."""
    from dataclasses import replace

    (finding,) = plain_findings(source)
    at = Location(row, 1)
    bad = Fix("Detach it", finding.fix.applicability, (Edit(Span(at, at), line),))  # type: ignore[union-attr]
    return replace(finding, fix=bad)


def test_a_fix_that_uses_a_name_unbound_where_it_lands_is_withheld_and_described() -> None:
    finding = _with_fix(CARRIED, 7, "    h = self.h.detach()\n")
    reason = refusal(CARRIED, finding)
    assert reason is not None and "`self`" in reason
    checked = by_hand(finding, reason)
    assert checked.fix is None and "fix by hand: Detach it" in checked.message


def test_a_fix_that_does_not_parse_or_leaves_its_finding_is_withheld() -> None:
    assert "does not parse" in (refusal(CARRIED, _with_fix(CARRIED, 7, "    h = (\n")) or "")
    assert "still reported" in (refusal(CARRIED, _with_fix(CARRIED, 7, "    print(h)\n")) or "")


def test_a_sound_fix_passes_the_checks() -> None:
    (finding,) = plain_findings(CARRIED)
    assert refusal(CARRIED, finding) is None
    text, remaining = fixed(CARRIED)
    assert remaining == () and "h = h.detach()" in text


def test_a_float_accumulator_keeps_no_item_call() -> None:
    source = """\
import torch

model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
total = 0.0
for step in range(4):
    loss = model(torch.randn(5, 3)).pow(2).mean()
    total += loss
    opt.zero_grad()
    total.backward()
    opt.step()
print(round(total.item(), 4), total.detach().item())
"""
    text, remaining = fixed(source)
    assert remaining == ()
    assert "total += loss.item()" in text and "loss.backward()" in text
    assert "print(round(total, 4), total)" in text


def test_a_tensor_accumulator_keeps_its_item_call() -> None:
    source = """\
import torch

model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
total = torch.zeros(())
for step in range(4):
    loss = model(torch.randn(5, 3)).pow(2).mean()
    total += loss
    opt.zero_grad()
    total.backward()
    opt.step()
print(total.item())
"""
    text, _ = fixed(source)
    assert "print(total.item())" in text


def test_a_tuple_state_is_detached_element_by_element() -> None:
    source = """\
import torch

lstm = torch.nn.LSTM(3, 4)
opt = torch.optim.SGD(lstm.parameters(), lr=0.1)


def train(model, steps):
    hidden = None
    for step in range(steps):
        out, hidden = model(torch.randn(5, 2, 3), hidden)
        loss = out.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


train(lstm, 3)
"""
    text, remaining = fixed(source)
    assert remaining == ()
    assert "hidden = tuple(h.detach() for h in hidden)" in text and "hidden.detach()" not in text


def test_code_whose_inputs_change_in_the_loop_is_not_moved_into_it() -> None:
    # `anchor` scales the fresh output (`enc(x) - anchor` would compare against it: a snapshot,
    # computed under no_grad where it is made; see test_snapshot.py).
    source = """\
import torch

enc = torch.nn.Linear(3, 3)
opt = torch.optim.SGD(enc.parameters(), lr=0.1)
x = torch.randn(4, 3)
anchor = enc(x)
for step in range(3):
    x = torch.randn(4, 3)
    loss = (enc(x) * anchor).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
    text, (finding,) = fixed(source)
    assert text == source
    assert finding.code == "GG006" and finding.fix is None and "fix by hand" in finding.message


def test_a_method_definition_is_recomputed_through_the_object_the_loop_uses() -> None:
    source = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Masked(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(2, 3))
        self.register_buffer("mask", (torch.rand(2, 3) > 0.5).float())
        self.w = self.weight * self.mask


layer = Masked()
opt = torch.optim.SGD(layer.parameters(), lr=0.1)
for step in range(3):
    loss = F.linear(torch.randn(4, 3), layer.w).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
    text, remaining = fixed(source)
    if remaining:  # the analysis may not see the attribute; then nothing may have been written
        assert text == source
        return
    ast.parse(text)
    assert "    layer.w = layer.weight * layer.mask\n" in text
    assert new_scope_problems(source, text) == []


def test_the_cause_model_picks_the_fix_kind_by_intent() -> None:
    assert fix_kind(Cause.REPEATED, Evidence(grads_read_between=True)) is FixKind.RETAIN_GRAPH
    assert fix_kind(Cause.SHARED_FORWARD, Evidence(grads_read_between=True)) is FixKind.RETAIN_GRAPH
    assert fix_kind(Cause.SHARED_FORWARD, Evidence(stepped_between=True)) is FixKind.RECOMPUTE_IN_LOOP
    assert fix_kind(Cause.SHARED_FORWARD, Evidence()) is FixKind.SUM_LOSSES
    assert fix_kind(Cause.REPEATED, Evidence(outside_loop=True)) is FixKind.RECOMPUTE_IN_LOOP
    assert fix_kind(Cause.LOOP_CARRIED, Evidence(shape="distribution")) is FixKind.RECOMPUTE_IN_LOOP
    assert fix_kind(Cause.LOOP_CARRIED, Evidence(written_in_place=True)) is FixKind.NO_GRAD
    assert fix_kind(Cause.LOOP_CARRIED, Evidence()) is FixKind.DETACH
    assert fix_kind(Cause.STEPPED, Evidence(frozen_source=True)) is FixKind.NO_GRAD
    assert fix_kind(Cause.STEPPED, Evidence()) is FixKind.RECOMPUTE_IN_LOOP
    assert fix_kind(Cause.ACCUMULATED, Evidence(periodic=True)) is FixKind.OTHER
    assert reads_grads(["g = [p.grad.clone() for p in model.parameters()]"])
    assert not reads_grads(["torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)", "opt.zero_grad()"])


def test_gradients_read_between_two_backwards_of_one_loss_mean_retain_graph() -> None:
    source = """\
import torch

model = torch.nn.Linear(3, 2)
x = torch.randn(4, 3)
for step in range(2):
    loss = model(x).pow(2).mean()
    loss.backward()
    first = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    loss.backward()
    model.zero_grad()
"""
    (decision,) = decisions_for(source)
    assert (decision.code, decision.kind) == ("GG001", FixKind.RETAIN_GRAPH)
    text, remaining = fixed(source)
    assert remaining == ()
    assert text.count("loss.backward(retain_graph=True)") == 1 and "(loss + loss)" not in text


def test_a_nested_state_list_is_not_emptied() -> None:
    from fixture_support import FIXTURES, fixture_source

    clean = fixture_source(FIXTURES / "clean" / "c3_nested_state_repackaged.py")
    source = "".join(line for line in clean.splitlines(keepends=True) if "= repackage_hidden(" not in line)
    text, (finding,) = fixed(source)
    assert text == source and "del state[:]" not in text
    assert finding.code == "GG003" and finding.fix is None
    if finding.message.startswith("`state`"):  # the carrier the analysis names
        assert "repackage_hidden" in finding.message


def _many_repeated_backwards(count: int) -> str:
    blocks = "".join(
        f"\nloss{i} = model(torch.randn(2, 3)).sum()\nloss{i}.backward()\nloss{i}.backward()\n"
        for i in range(count)
    )
    return "import torch\n\nmodel = torch.nn.Linear(3, 1)\n" + blocks


def test_many_sound_fixes_of_one_file_are_all_offered_and_the_same_every_time() -> None:
    """Fixes are checked together (one re-analysis), so a file with many findings keeps every fix,
    and analysing the same text again (a second lint in one process, a server re-check) agrees."""
    from gradguard.analysis import analyze

    source = _many_repeated_backwards(30)
    first = analyze(source)
    assert first == analyze(source)
    assert len([d for d in first if d.code == "GG001"]) == 30
    assert all(d.fix is not None for d in first if d.code == "GG001"), [d.message for d in first]


def test_one_bad_fix_among_many_is_withheld_alone() -> None:
    """A group that fails the checks is split: the bad fix is found and withheld with its reason,
    the sound ones around it stay offered."""
    from dataclasses import replace

    from gradguard.fixcheck import checked

    source = _many_repeated_backwards(9)
    found = list(plain_findings(source))
    bad_at = 5
    at = Location(found[bad_at].span.start.row, 1)
    found[bad_at] = replace(found[bad_at], fix=Fix("Detach it", found[bad_at].fix.applicability,  # type: ignore[union-attr]
                                                  (Edit(Span(at, at), "print(self.x)\n"),)))
    result = checked(source, found)
    withheld = [index for index, diagnostic in enumerate(result) if diagnostic.fix is None]
    assert withheld == [bad_at]
    assert "`self`" in result[bad_at].message


def test_the_scope_check_of_a_long_script_skips_the_bodies_a_fix_left_alone() -> None:
    from gradguard.fixcheck import _skeletons

    before = (
        "import torch\nX = 1\n\n\ndef helper(a=X):\n    \"\"\"Doc.\"\"\"\n    return y + a\n\n\n"
        "class A:\n    z = X\n\n    def m(self):\n        return q\n\n\nh = 0\nfor i in range(3):\n    h = helper(h)\n"
    )
    after = before.replace("h = helper(h)", "h = helper(g)")
    stubbed = _skeletons(before, after)[1]
    assert "return y + a" not in stubbed and "return q" not in stubbed  # unchanged bodies, stubbed
    assert "def helper(a=X):" in stubbed and "    z = X" in stubbed  # what runs where it stands stays
    assert new_scope_problems(before, after) == ["g"]
    # A module-level name moved below the definitions that read it when they are defined.
    moved = before.replace("X = 1\n", "").replace("h = 0\n", "h = 0\nX = 1\n")
    assert new_scope_problems(before, moved) == ["X"]
    # A global that an unchanged body reads, no longer bound: the bindings differ, nothing is stubbed.
    gone = before.replace("h = 0\n", "").replace("h = helper(h)", "k = helper(0)").replace("return q", "return h")
    gone_before = before.replace("return q", "return h")
    assert _skeletons(gone_before, gone) == (gone_before, gone)
    assert new_scope_problems(gone_before, gone) == ["h"]


def test_the_stubbed_scope_check_agrees_with_the_whole_one_on_every_fixture_and_its_fix() -> None:
    from collections import Counter

    from gradguard.fixcheck import _skeletons

    fixtures = Path(__file__).resolve().parents[2] / "fixtures"
    pairs = [(path, fixtures / "fixed" / path.name) for path in sorted((fixtures / "buggy").glob("*.py"))]
    # One in five (a scope analysis of each side costs ~0.1 s), fixtures of eight rules among them.
    pairs = [(b.read_text(), f.read_text()) for b, f in pairs[::5] if f.exists()]
    assert len(pairs) >= 8
    for before, after in pairs:
        whole: Counter[str] = scope_problems(after) - scope_problems(before)
        stubbed = _skeletons(before, after)
        assert scope_problems(stubbed[1]) - scope_problems(stubbed[0]) == whole


def test_state_only_written_in_place_is_told_apart_from_state_rebound() -> None:
    import libcst as cst

    from gradguard.rules import _writes_in_place

    def statement(code: str) -> cst.CSTNode:
        return cst.parse_module(code).body[0]

    for code in ("bank.index_copy_(0, idx, feats)\n", "buf.mul_(m).add_(x.mean())\n", "tp.copy_(p)\n",
                 "bank[idx] = feats\n", "t.lerp_(s, 0.01)\n"):
        assert _writes_in_place(statement(code)), code
    for code in ("h = cell(x, h)\n", "buf = buf.mul(m)\n", "h.detach_()\n", "print(bank.mean())\n",
                 "bank[idx], n = feats, 1\n", "bank.add(x)\n", "total += loss\n"):
        assert not _writes_in_place(statement(code)), code
