"""What the reliability work found wrong in the analysis (gradguard/analysis, gradguard/rules), kept as
strict xfails until it is fixed there: each turns into a failure (XPASS) the day it works."""

from __future__ import annotations

import json
from pathlib import Path

from gradguard.config import Settings
from gradguard.engine import check_source

SETTINGS = Settings(root=Path("."))


def test_a_notebook_message_names_the_earlier_backward_by_cell_and_row() -> None:
    cells = [
        "import torch\nw = torch.randn(3, requires_grad=True)\n",
        "loss = (w * 2).sum()\nprint(loss.item())\nloss.backward()\n",
        "loss.backward()\n",
    ]
    document = {
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": text} for text in cells],
        "metadata": {},
    }
    (finding,) = check_source(json.dumps(document), "train.ipynb", SETTINGS).diagnostics
    assert (finding.code, finding.cell, finding.span.start.row) == ("GG001", 3, 1)
    assert finding.related_cells[0] == 2 and finding.related[0].span.start.row == 3  # mapped right
    assert "line 5" not in finding.message, finding.message  # program row 5 is cell 2, line 3


def test_a_backward_in_a_branch_then_again_unconditionally_is_flagged() -> None:
    source = """\
import torch

w = torch.randn(3, requires_grad=True)
for step in range(3):
    loss = (w * 2).sum()
    if step % 2 == 0:
        loss.backward()
    loss.backward()
"""
    assert [(d.code, d.span.start.row) for d in check_source(source, "train.py", SETTINGS).diagnostics] == [
        ("GG001", 8)
    ]


def test_the_gg006_fix_keeps_nested_blocks_indented() -> None:
    import ast

    from gradguard.engine import Prepared
    from gradguard.fixes import fix_prepared

    source = """\
import torch

model = torch.nn.Linear(4, 1)
x = torch.randn(8, 4)
out = model(x)
for step in range(3):
    try:
        loss = out.pow(2).mean()
        loss.backward()
    finally:
        if step > 1:
            if step == 2:
                print("last step")
            out = model(x)
"""
    selection = SETTINGS.selection("train.py")
    fixed, _, applied, note = fix_prepared(Prepared("train.py", source, "utf-8"), selection, unsafe=True)
    assert note is None, note
    assert applied >= 1
    ast.parse(fixed.source)


def _fix_all(source: str) -> tuple[str, int]:
    from gradguard.engine import Prepared
    from gradguard.fixes import fix_prepared

    fixed, _, applied, note = fix_prepared(
        Prepared("train.py", source, "utf-8"), SETTINGS.selection("train.py"), unsafe=True
    )
    assert note is None, note
    return fixed.source, applied


def test_the_gg004_fix_of_the_functional_backward_backwards_the_step_loss() -> None:
    source = """\
import torch

w = torch.randn(3, requires_grad=True)
total = 0
for step in range(3):
    loss = (w * 2).sum()
    total = total + loss
    torch.autograd.backward(total)
"""
    fixed, _ = _fix_all(source)
    assert "total = total + loss.item()" in fixed
    assert "loss.backward()" in fixed or "torch.autograd.backward(loss)" in fixed, fixed


def test_fix_reaches_a_fixed_point_on_a_self_accumulating_loss() -> None:
    source = """\
import torch

for epoch in range(2):
    with torch.inference_mode():
        loss = loss + loss2
    while step < 3:
        break
    for batch in range(2):
        loss.backward(create_graph=True)
    while step < 3:
        torch.autograd.backward(loss)
"""
    fixed, _ = _fix_all(source)
    again, applied = _fix_all(fixed)
    assert (applied, again) == (0, fixed)
    assert ".item().item()" not in fixed, fixed
