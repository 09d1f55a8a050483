"""Metamorphic tests: every buggy and clean fixture, rewritten mechanically in ways that keep what it
does, keeps exactly its findings (buggy) or its silence (clean).

The rewrites (`metamorphic.py`): model classes and helpers moved into another module of the
project, `for` loops written as `while` loops, each backward under a condition (a flag, or a call no
condition atom names, `if should_backward():`), the training loop
moved into a function that takes what it uses or into a `Trainer` class holding it as attributes,
the loop's state kept in a dict or in a tuple. A finding is compared by its rule and the text of
the line it points at (rewrites move lines).

`OPEN` lists what the analysis does not follow yet: strict xfails, each to go when it learns it.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from fixture_support import FIXTURES
from metamorphic import REWRITES

from gradguard.analysis import analyze
from gradguard.fixcheck import unchecked

MARKER = re.compile(r"#.*\[GG\d{3}\].*$")
SCRIPTS = sorted([*FIXTURES.glob("buggy/*.py"), *FIXTURES.glob("clean/*.py")])

_DICT_ACCUMULATED = "a loss accumulated in a dict entry (`state['total'] += loss`) is not seen"
_TUPLE_ACCUMULATED = ("a loss accumulated through a tuple (`acc = state[0]; acc += loss; state = (acc,)`) is "
                      "GG003 on the temporary, not GG004")
_DICT_DETACHED = ("a state kept in a dict and detached or rebuilt by a helper (`state['h'] = f(state['h'])`) "
                  "still reads as carrying the previous iteration's graph")
OPEN = {
    ("gg004_epoch_loss_backward_in_loop", "state-in-a-dict"): _DICT_ACCUMULATED,
    ("gg004_grad_accum_not_reset", "state-in-a-dict"): _DICT_ACCUMULATED,
    ("gg004_total_loss_iadd", "state-in-a-dict"): _DICT_ACCUMULATED,
    ("gg004_epoch_loss_backward_in_loop", "state-in-a-tuple"): _TUPLE_ACCUMULATED,
    ("gg004_grad_accum_not_reset", "state-in-a-tuple"): _TUPLE_ACCUMULATED,
    ("gg004_total_loss_iadd", "state-in-a-tuple"): _TUPLE_ACCUMULATED,
    ("gg010_running_loss_tensor", "state-in-a-dict"): "loss tensors kept in a dict entry across steps are not seen",
    ("c1_hidden_detach_inplace", "state-in-a-dict"): _DICT_DETACHED,
}


def _cases() -> list:
    return [pytest.param(fixture, rewrite, id=f"{fixture.parent.name}/{fixture.stem}-{rewrite}",
                         marks=[pytest.mark.xfail(strict=True, reason=OPEN[(fixture.stem, rewrite)])]
                         if (fixture.stem, rewrite) in OPEN else [])
            for fixture in SCRIPTS for rewrite in sorted(REWRITES)]


def _findings(source: str, path: Path) -> Counter[tuple[str, str]]:
    lines = source.splitlines()
    with unchecked():  # findings are compared, not their fixes: no re-analysis to check each fix
        found = analyze(source, path=str(path))
    return Counter((d.code, _line_key(lines[d.span.start.row - 1])) for d in found)


def _line_key(line: str) -> str:
    """A line as rewrites keep it: its marker comment (`# [GG003]`) where it has one (rewrites may
    rename what the code reads, `self.model` for `model`), else its text."""
    marker = MARKER.search(line)
    return marker.group() if marker else line.strip()


@cache
def _original(fixture: Path) -> Counter[tuple[str, str]]:
    return _findings(fixture.read_text(encoding="utf-8"), fixture)


@pytest.mark.parametrize(("fixture", "rewrite"), _cases())
def test_rewritten_fixture_keeps_its_findings(fixture: Path, rewrite: str, tmp_path: Path) -> None:
    source = fixture.read_text(encoding="utf-8")
    files = REWRITES[rewrite](source)
    if files is None:
        return  # nothing in this fixture for the rewrite to change: the original is the rewrite
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    script = tmp_path / next(iter(files))
    expected = _original(fixture)
    if fixture.parent.name == "buggy":
        assert expected, "a buggy fixture has findings"
    assert _findings(script.read_text(encoding="utf-8"), script) == expected
