"""Metamorphic tests: every buggy and clean fixture, rewritten mechanically in ways that keep what it
does, keeps exactly its findings (buggy) or its silence (clean).

The rewrites (`metamorphic.py`): model classes and helpers moved into another module of the
project, `for` loops written as `while` loops, each backward under a condition, the training loop
moved into a function that takes what it uses. A finding is compared by its rule and the text of
the line it points at (rewrites move lines).
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from fixture_support import FIXTURES
from metamorphic import REWRITES

from gradguard.analysis import analyze

SCRIPTS = sorted([*FIXTURES.glob("buggy/*.py"), *FIXTURES.glob("clean/*.py")])


def _findings(source: str, path: Path) -> Counter[tuple[str, str]]:
    lines = source.splitlines()
    found = analyze(source, path=str(path))
    return Counter((d.code, lines[d.span.start.row - 1].strip()) for d in found)


@cache
def _original(fixture: Path) -> Counter[tuple[str, str]]:
    return _findings(fixture.read_text(encoding="utf-8"), fixture)


@pytest.mark.parametrize("rewrite", sorted(REWRITES))
@pytest.mark.parametrize("fixture", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
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
