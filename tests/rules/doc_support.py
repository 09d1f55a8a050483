"""Support for the tests of the rule documents in `rules/`: the documents, their examples, fixing text.

The analyzer is checked against every document's examples. Where it is known to get an example
wrong, `KNOWN_ANALYZER_PROBLEMS` says so, and the test concerned is a strict xfail: it starts to fail
as soon as the analyzer is fixed, so the entry must then be removed.
"""

from __future__ import annotations

import pytest

from gradguard import catalogue
from gradguard.catalogue import Example, RuleDoc
from gradguard.config import Selection
from gradguard.engine import Prepared
from gradguard.fixes import fix_prepared

ALL_RULES = Selection(select=("GG",), ignore=())
KINDS = ("bad", "good", "fixed")
SECTIONS = (
    "What it does",
    "Why is this bad?",
    "Example",
    "Use instead",
    "Fix",
    "Fix safety",
    "At runtime",
    "References",
)

# (code, check) -> what the analyzer gets wrong. `check`: "bad", "good", "carrier", "fix" or "fixed".
KNOWN_ANALYZER_PROBLEMS: dict[tuple[str, str], str] = {}


def documents() -> list[RuleDoc]:
    """Every rule document, in code order."""
    return list(catalogue.load().values())


def codes() -> list[str]:
    """The codes of every rule document."""
    return [doc.code for doc in documents()]


def example(doc: RuleDoc, kind: str) -> Example:
    """The one example of `kind` (bad, good, fixed) in a document."""
    found = [e for e in doc.examples if e.kind == kind]
    assert len(found) == 1, (
        f"{doc.path.name}: {len(found)} `python {kind}` examples, expected one"
    )
    return found[0]


def params(check: str) -> list[object]:
    """The rule codes as pytest parameters, the known analyzer problems of `check` as strict xfails."""
    out: list[object] = []
    for code in codes():
        reason = KNOWN_ANALYZER_PROBLEMS.get((code, check))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(code, marks=marks, id=code))
    return out


def fix_source(source: str) -> str:
    """What `gradguard lint --fix --unsafe-fixes` writes for a file holding `source`."""
    fixed, _, _, note = fix_prepared(
        Prepared("example.py", source, "utf-8"), ALL_RULES, unsafe=True
    )
    assert note is None, note
    return fixed.source
