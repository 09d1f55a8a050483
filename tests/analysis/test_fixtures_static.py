"""The analyzer against every fixture: buggy ones flagged exactly at their marked lines, clean and
fixed ones silent, and `--fix --unsafe-fixes` turning each buggy one into a program that trains
exactly like its hand-written fix (same printed numbers), under real torch."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from fixture_support import (
    buggy_fixtures,
    clean_fixtures,
    expectation,
    fixed_fixtures,
    fixed_for,
    fixture_source,
    notebook_script,
    run_source_many,
)

from gradguard.analysis import analyze
from gradguard.config import Selection
from gradguard.engine import prepare
from gradguard.fixcheck import unchecked
from gradguard.fixes import fix_prepared
from gradguard.parse import parse_module

ALL_RULES = Selection(select=("GG",), ignore=())


def findings(path: Path) -> list[tuple[object, str]]:
    """(row, code) of every finding; rows are (cell, row) pairs for notebooks."""
    with unchecked():  # the findings' places are compared here; their fixes are checked below
        found = analyze(fixture_source(path))
    if path.suffix == ".ipynb":
        script = notebook_script(path)
        return sorted((script.origins[d.span.start.row - 1], d.code) for d in found)
    return sorted((d.span.start.row, d.code) for d in found)


@pytest.mark.parametrize("path", buggy_fixtures(), ids=lambda p: p.name)
def test_buggy_fixture_is_flagged_at_its_markers(path: Path) -> None:
    assert findings(path) == sorted(expectation(path).markers)


@pytest.mark.parametrize("path", clean_fixtures() + fixed_fixtures(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_correct_program_is_not_flagged(path: Path) -> None:
    assert findings(path) == []


@cache
def fixed_by_gradguard(path: Path) -> str:
    """The fixture after `gradguard lint --fix --unsafe-fixes` (file text; JSON for notebooks)."""
    fixed, remaining, applied, note = fix_prepared(prepare(path.read_bytes(), str(path)), ALL_RULES, unsafe=True)
    assert note is None, note
    assert applied > 0, f"no fix was applied to {path.name}"
    assert remaining == (), f"{path.name}: still flagged after fixing: {remaining}"
    return fixed.source


@pytest.mark.parametrize("path", buggy_fixtures(), ids=lambda p: p.name)
def test_fix_reparses_and_is_idempotent(path: Path) -> None:
    text = fixed_by_gradguard(path)
    if path.suffix == ".py":
        parse_module(text)
    again, _, applied, _ = fix_prepared(prepare(text.encode(), str(path)), ALL_RULES, unsafe=True)
    assert applied == 0 and again.source == text


@pytest.fixture(scope="module")
def training_runs() -> dict[str, object]:
    """Every buggy fixture fixed by gradguard, and its hand-written fix, run in one interpreter."""
    sources: dict[str, str] = {}
    for path in buggy_fixtures():
        sources[f"gradguard/{path.name}"] = fixed_by_gradguard(path)
        sources[f"hand/{path.name}"] = fixed_for(path).read_text(encoding="utf-8")
    return run_source_many(sources, timeout=900)


@pytest.mark.torch
@pytest.mark.parametrize("path", buggy_fixtures(), ids=lambda p: p.name)
def test_fixed_program_trains_like_the_hand_written_fix(path: Path, training_runs: dict) -> None:
    ours = training_runs[f"gradguard/{path.name}"]
    theirs = training_runs[f"hand/{path.name}"]
    assert theirs.error_type is None, theirs.traceback
    assert ours.error_type is None, ours.traceback
    assert ours.stdout == theirs.stdout
