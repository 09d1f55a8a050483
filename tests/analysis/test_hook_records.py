"""Activations recorded by a forward hook into a dict (`feats["a"] = output`): the entry is replaced at
every forward, so a correct program that compares this step's features with a reference recorded
under no_grad is clean, and the same program recording the reference with its graph is found."""

from __future__ import annotations

import textwrap

from gradguard.analysis import analyze

RECORDED = textwrap.dedent('''\
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
feats = {}


def hook(module, inputs, output):
    feats["a"] = output


model[0].register_forward_hook(hook)
anchor_x = torch.randn(16, 4)
model(anchor_x)
anchor = dict(feats)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    out = model(torch.randn(16, 4))
    loss = out.pow(2).mean() + F.mse_loss(feats["a"], anchor["a"])
    opt.zero_grad()
    loss.backward()
    opt.step()
''')

REFERENCE_WITHOUT_GRAPH = RECORDED.replace(
    "model(anchor_x)\nanchor = dict(feats)",
    "with torch.no_grad():\n    model(anchor_x)\n    anchor = dict(feats)")


def _codes(source: str) -> list[tuple[str, int]]:
    return sorted((d.code, d.span.start.row) for d in analyze(source))


def test_a_reference_recorded_with_its_graph_is_found() -> None:
    assert _codes(RECORDED) == [("GG006", 22)]


def test_a_reference_recorded_under_no_grad_is_clean() -> None:
    assert REFERENCE_WITHOUT_GRAPH != RECORDED
    assert _codes(REFERENCE_WITHOUT_GRAPH) == []


def test_a_dict_entry_assigned_twice_holds_the_last_value() -> None:
    source = textwrap.dedent("""\
        import torch

        w = torch.ones(3, requires_grad=True)
        opt = torch.optim.SGD([w], lr=0.1)
        state = {}
        for step in range(3):
            state["loss"] = (w * step).sum()
            opt.zero_grad()
            state["loss"].backward()
            opt.step()
        """)
    assert _codes(source) == []
