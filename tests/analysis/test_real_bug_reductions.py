"""Reductions of real bugs from public history (`bench/realbugs_reductions_unseen*/`, each kept in the
shape of its repository: the script and the modules it imports), with the program as its fix left it:
the buggy program gets an error-level finding, the fixed one none. Each ran under torch when it was
written (the buggy one raising the error); the ones the model still gets wrong are strict xfails
naming what it lacks.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gradguard.analysis import analyze
from gradguard.model import Severity

BENCH = Path(__file__).resolve().parents[2] / "bench"
# (folder of the buggy program, folder of the fixed one)
PAIRS: dict[str, tuple[Path, Path]] = {
    **{case.name: (case / "buggy", case / "fixed")
       for case in sorted((BENCH / "realbugs_reductions_unseen5").iterdir()) if case.is_dir()},
    "infinitransformer-segment-memory": (BENCH / "realbugs_reductions_unseen4" / "infini_memory",
                                         BENCH / "realbugs_reductions_unseen4" / "infini_memory_fix_fp"),
}
OPEN: dict[tuple[str, str], str] = {
    ("mae-dfer-lgblock-slice-write-after-norm", "buggy"): "the model is made by name through a registry "
    "filled by a decorator (`_MODELS[fn.__name__] = fn`, `create_model(name)`): its blocks are never run",
    ("infinitransformer-segment-memory", "fixed"): "a tuple grown only when the memory is not None "
    "(`outputs += (memory, norm_term)`) and read back with a negative index: the join of tuples of "
    "different lengths loses positions, and the detached memory seems to carry the loss's graph",
}


def _errors(folder: Path) -> list[tuple[str, str, int]]:
    found = []
    for script in sorted(folder.glob("*.py")):
        for d in analyze(script.read_text(encoding="utf-8"), path=str(script)):
            if d.severity is Severity.ERROR:
                found.append((d.code, script.name, d.span.start.row))
    return found


def _cases() -> list[object]:
    cases = []
    for name in PAIRS:
        for side in ("buggy", "fixed"):
            reason = OPEN.get((name, side))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason is not None else []
            cases.append(pytest.param(name, side, id=f"{name}-{side}", marks=marks))
    return cases


@pytest.mark.parametrize(("name", "side"), _cases())
def test_the_bug_is_found_and_its_fix_is_clean(name: str, side: str) -> None:
    buggy, fixed = PAIRS[name]
    if side == "buggy":
        assert _errors(buggy) != []
    else:
        assert _errors(fixed) == []
