"""Executable truth for the rule documents: every example runs under real torch, all in ONE interpreter.

A bad example of an error rule raises the torch error its document names ("backward through the graph a
second time", or for GG011 the in-place error); a bad
example of a warning rule runs; every good and fixed example runs cleanly.
"""

from __future__ import annotations

import importlib.util

import pytest
from doc_support import KINDS, codes, example
from fixture_support import DOUBLE_BACKWARD_MESSAGE, RunOutcome, run_source_many

from gradguard import catalogue
from gradguard.model import Severity

INPLACE_ERROR = "one of the variables needed for gradient computation has been modified by an inplace operation"

# Lightning examples need lightning, which the dev extra does not install.
PRELUDE = "import os, tempfile\nos.chdir(tempfile.mkdtemp(prefix='gg-rule-docs-'))\n"
CASES = [(code, kind) for code in codes() for kind in KINDS]


def _needs(source: str) -> str | None:
    if "import lightning" in source and importlib.util.find_spec("lightning") is None:
        return "lightning"
    return None


@pytest.fixture(scope="module")
def outcomes() -> dict[str, RunOutcome]:
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    sources = {}
    for code, kind in CASES:
        source = example(catalogue.get(code), kind).source
        if _needs(source) is None:
            sources[f"{code}-{kind}.py"] = source
    return run_source_many(sources, prelude=PRELUDE, timeout=600)


def _describe(outcome: RunOutcome) -> str:
    return f"{outcome.error_type}: {outcome.error_message}\n{outcome.traceback}\nstderr:\n{outcome.stderr[-2000:]}"


@pytest.mark.torch
@pytest.mark.parametrize(
    ("code", "kind"), CASES, ids=[f"{code}-{kind}" for code, kind in CASES]
)
def test_example_runs_as_documented(
    outcomes: dict[str, RunOutcome], code: str, kind: str
) -> None:
    doc = catalogue.get(code)
    missing = _needs(example(doc, kind).source)
    if missing is not None:
        pytest.skip(f"{missing} is not installed")
    outcome = outcomes[f"{code}-{kind}.py"]
    if kind == "bad" and doc.severity is Severity.ERROR:
        # Each error rule explains one of torch's two errors, and its bad example raises that one.
        assert doc.torch_error in (DOUBLE_BACKWARD_MESSAGE, INPLACE_ERROR)
        assert outcome.raised(doc.torch_error), _describe(outcome)
        source = example(doc, kind).source
        marked = {row for row, _ in example(doc, kind).expected}
        innermost = (
            source.splitlines()[outcome.row - 1] if isinstance(outcome.row, int) else ""
        )
        if ".backward(" in innermost or "grad(" in innermost:
            assert outcome.row in marked, (
                f"raised at line {outcome.row}, markers at {sorted(marked)}"
            )
        else:
            # Raised by a framework's own backward (Lightning's, under trainer.fit()): the marker
            # flags the manual backward in the example that freed the graph before it.
            assert all(".backward(" in source.splitlines()[row - 1] for row in marked)
    else:
        assert outcome.ok, _describe(outcome)
