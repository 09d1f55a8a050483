"""Library behaviours that keep a graph from one step to the next (issue 9): data built from model
outputs and batched by TensorDataset/DataLoader, forward hooks that store activations (a lambda
appending to a list), `functools.lru_cache` / `cached_property`, the legacy `weight_norm` attribute,
`parametrize.cached()` around a loop, distributions and dict caches kept across steps.

Each program in `library/` runs under real torch: a buggy one (`# expect: GGnnn` on its failing line)
raises the double-backward error there, an `ok_` twin runs. The analysis must flag exactly the
marked lines and nothing in the twins; the automatic fix, where one is offered, must run.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gradguard.analysis import analyze
from gradguard.fixes import choose_fixes, fix_text_round
from gradguard.model import Severity
from tests.fixture_support import run_source_many

LIBRARY = Path(__file__).resolve().parent / "library"
PROGRAMS = sorted(LIBRARY.glob("*.py"))
BUGGY = [p for p in PROGRAMS if not p.name.startswith("ok_")]
CLEAN = [p for p in PROGRAMS if p.name.startswith("ok_")]
# Shapes with no automatic fix yet, and what it would take; their findings say what to do by hand.
BY_HAND = {
    "rotary_dict_cache": "emptying `self.cache` needs the module's name where the loop is",
    "weight_norm_read_before_forward": "the read belongs after the forward (a move across statements)",
    "parametrize_cached_around_loop": "`parametrize.cached()` belongs inside the loop, around one step",
    # Moving the read into the loop is refused by the fix check: the legacy attribute is only
    # computed again by a forward, so the moved read hands out the same stale graph.
    "weight_norm_read_before_loop": "the weight must come from a forward (or a parametrization)",
}
_EXPECT = re.compile(r"#\s*expect:\s*(GG\d{3})")


def _expected(path: Path) -> list[tuple[str, int]]:
    return [(m.group(1), row) for row, line in enumerate(path.read_text().splitlines(), 1)
            if (m := _EXPECT.search(line))]


def _errors(source: str, path: Path) -> list[tuple[str, int]]:
    return sorted((d.code, d.span.start.row) for d in analyze(source, path=str(path))
                  if d.severity is Severity.ERROR)


def _fixed(path: Path) -> str | None:
    source = path.read_text()
    found = analyze(source, path=str(path))
    fixes = choose_fixes(found, unsafe=True)
    return fix_text_round(source, fixes)[0] if fixes else None


@pytest.fixture(scope="module")
def runs() -> dict[str, object]:
    sources = {p.name: p.read_text() for p in PROGRAMS}
    sources.update({f"fixed:{p.name}": text for p in BUGGY if (text := _fixed(p)) is not None})
    return run_source_many(sources, timeout=240)


@pytest.mark.parametrize("path", BUGGY, ids=lambda p: p.stem)
def test_the_failing_line_is_flagged(path: Path) -> None:
    expected = _expected(path)
    assert expected, "a buggy program marks its failing line"
    assert _errors(path.read_text(), path) == expected


@pytest.mark.parametrize("path", CLEAN, ids=lambda p: p.stem)
def test_the_correct_twin_is_not_flagged(path: Path) -> None:
    assert _errors(path.read_text(), path) == []


@pytest.mark.parametrize("path", BUGGY, ids=lambda p: p.stem)
def test_torch_fails_where_the_finding_is(path: Path, runs: dict) -> None:
    outcome = runs[path.name]
    assert outcome.is_double_backward, outcome.traceback
    assert outcome.row == _expected(path)[0][1]


@pytest.mark.parametrize("path", CLEAN, ids=lambda p: p.stem)
def test_the_correct_twin_runs(path: Path, runs: dict) -> None:
    assert runs[path.name].ok, runs[path.name].traceback


@pytest.mark.parametrize("path", BUGGY, ids=lambda p: p.stem)
def test_the_offered_fix_runs_and_leaves_no_finding(path: Path, runs: dict) -> None:
    key = f"fixed:{path.name}"
    assert (key not in runs) == (path.stem in BY_HAND)
    if key in runs:
        assert runs[key].ok, runs[key].traceback
        fixed = _fixed(path)
        assert fixed is not None and _errors(fixed, path) == []
