"""Training libraries that run the backward pass for the user (issue 9's DeepSpeed `engine.backward`,
mmengine's `optim_wrapper.update_params`, mmcv's OptimizerHook after `train_step`): training scripts
in `frameworks/` written as their documentation shows, each buggy one (`# expect: GGnnn` on its
failing line) beside a correct twin.

The analysis must flag exactly the marked lines and nothing in the `ok_` programs. DeepSpeed and
mmengine and mmcv are not installed where the tests run, so these programs are analysed, not executed; what
the library does with graphs is the API fact (`gradguard/analysis/api/deepspeed.py`, `mmengine.py`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gradguard.analysis import analyze
from gradguard.config import Settings
from gradguard.engine import check_source
from gradguard.model import Severity

FRAMEWORKS = Path(__file__).resolve().parent / "frameworks"
PROGRAMS = sorted(FRAMEWORKS.glob("*.py"))
_EXPECT = re.compile(r"#\s*expect:\s*(GG\d{3})")


def _expected(path: Path) -> list[tuple[str, int]]:
    return [(m.group(1), row) for row, line in enumerate(path.read_text().splitlines(), 1)
            if (m := _EXPECT.search(line))]


def test_every_buggy_program_has_a_correct_twin() -> None:
    buggy = {p.stem for p in PROGRAMS if not p.name.startswith("ok_")}
    assert buggy and all(any(o.stem.startswith(f"ok_{b}") for o in PROGRAMS) for b in buggy)


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_the_failing_line_and_nothing_else_is_flagged(path: Path) -> None:
    found = analyze(path.read_text(), path=str(path))
    errors = sorted((d.code, d.span.start.row) for d in found if d.severity is Severity.ERROR)
    assert errors == _expected(path)
    for diagnostic in found:
        # The carrier as the user names it, or the framework by the name its facts give it.
        assert ("`state`" if diagnostic.code == "GG003" else "mmcv's OptimizerHook") in diagnostic.message


@pytest.mark.parametrize("path", [p for p in PROGRAMS if not p.name.startswith("ok_")], ids=lambda p: p.stem)
def test_the_engine_does_not_skip_the_file(path: Path) -> None:
    """Through the whole lint path (prefilter, screen, analysis): a script whose only backward is the
    library's is read."""
    result = check_source(path.read_text(), str(path), Settings(root=FRAMEWORKS))
    assert [(d.code, d.span.start.row) for d in result.diagnostics] == _expected(path)
