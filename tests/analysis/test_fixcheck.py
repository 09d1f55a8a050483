"""Every fix is checked before it is offered: a fix that would leave a name unbound, not parse, or
not make its finding disappear is withheld, and the finding says in words what to do instead.
Also the edits that are right for the types and scopes involved (tuple and float state, distributions,
code moved into a loop, a method's definition re-read through the object)."""

from __future__ import annotations

import ast

from gradguard.causes import Cause, Evidence, FixKind, fix_kind, reads_grads
from gradguard.config import Selection
from gradguard.engine import Prepared
from gradguard.fixcheck import by_hand, new_scope_problems, plain_findings, refusal, scope_problems
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
    source = """\
import torch

enc = torch.nn.Linear(3, 3)
opt = torch.optim.SGD(enc.parameters(), lr=0.1)
x = torch.randn(4, 3)
anchor = enc(x)
for step in range(3):
    x = torch.randn(4, 3)
    loss = (enc(x) - anchor).pow(2).mean()
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


def test_the_check_budget_belongs_to_one_analysis_not_to_the_text() -> None:
    """Past MAX_CHECKED_FIXES in one file the rest are withheld; analysing the same text again (a
    second lint in the same process, a server re-check) gets the same fixes, not fewer."""
    from gradguard.analysis import analyze
    from gradguard.fixcheck import MAX_CHECKED_FIXES

    blocks = "".join(
        f"\nloss{i} = model(torch.randn(2, 3)).sum()\nloss{i}.backward()\nloss{i}.backward()\n"
        for i in range(MAX_CHECKED_FIXES + 2)
    )
    source = "import torch\n\nmodel = torch.nn.Linear(3, 1)\n" + blocks
    first = analyze(source)
    again = analyze(source)
    assert first == again
    offered = [d for d in first if d.code == "GG001" and d.fix is not None]
    withheld = [d for d in first if d.code == "GG001" and d.fix is None]
    assert len(offered) == MAX_CHECKED_FIXES, [d.message for d in first]
    assert withheld and all("are checked" in d.message for d in withheld)
