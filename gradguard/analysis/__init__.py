"""Facts about a file, computed once and shared by every rule.

`analyze(source)` is the single entry point of the lint core: parse, build the dataflow model of which
values carry which autograd graph, and let every rule report from it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from gradguard.model import Diagnostic, Note

if TYPE_CHECKING:
    from gradguard.analysis.api.facts import Fact
    from gradguard.analysis.facts import FileFacts

# What the API facts say a finding needs, written out so that a file is screened without importing
# the facts (a warm run never does): the methods that run a backward pass (`backward`,
# `manual_backward`, mmengine's `update_params`), the functions that do, found by the module they live
# in (`autograd`: their own names are common words such as `grad`), and the keywords that keep or build
# a graph. `prefilter_words` in tests/analysis/test_api_home.py derives the same from the facts.
_WORDS = (b"autograd", b"backward", b"create_graph", b"manual_backward", b"retain_graph", b"retain_variables",
          b"update_params")
_CALLED = (b"backward", b"grad", b"manual_backward", b"update_params")
_KEYWORDS = (b"create_graph", b"retain_graph", b"retain_variables")
# The methods a framework calls per batch and backward()s the result of (`api.framework_steps()`): a
# file that defines one (`def training_step(`) runs a backward it never writes.
_STEPS = (b"compute_loss", b"train_step", b"training_step")
# A noqa directive naming a gradguard code can be unused (GG100) in any file, backward or not (one
# search for the upper-case code first: most files hold no "GG").
_GG_NOQA = re.compile(rb"#\s*noqa\s*:[^\n]*?\bGG[0-9]", re.IGNORECASE)


@cache
def _prefilter() -> tuple[tuple[bytes, ...], re.Pattern[bytes]]:
    """Words every finding needs, then the call shapes themselves. A file with none of them cannot hold
    a finding ("backward compatibility" in a docstring passes the first test, not the second)."""
    shapes = re.compile(rb"\b(?:" + b"|".join(_CALLED + _STEPS) + rb")\s*\(|\b(?:" + b"|".join(_KEYWORDS)
                        + rb")\s*=")
    return _WORDS + _STEPS, shapes


@cache
def _declared_shapes(names: frozenset[str]) -> re.Pattern[bytes]:
    called = "|".join(sorted(map(re.escape, names)))
    return re.compile(rf"\b(?:{called})\s*\(".encode())


def might_hold_finding(data: bytes | str, declared: tuple[Fact, ...] = ()) -> bool:
    """The cheap text prefilter: False when the text cannot hold any finding (no parsing needed).

    `declared`, the project's `[tool.gradguard.api]` facts: a call of a helper it declares to run a
    backward (`engine.step(loss)`, by the helper's own name) may hold one too."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    needles, shapes = _prefilter()
    if any(needle in raw for needle in needles) and shapes.search(raw) is not None:
        return True
    if b"GG" in raw and _GG_NOQA.search(raw) is not None:
        return True
    names = frozenset(fact.name.rsplit(".", 1)[-1] for fact in declared if fact.backward is not None)
    return bool(names) and _declared_shapes(names).search(raw) is not None


def facts_for(source: str, describe_row: Callable[[int], str] | None = None,
              path: str | None = None) -> FileFacts | None:
    """The facts of one source text, or None when it cannot hold a finding (raises `ParseFailure`).

    With the file's `path`, the project modules it imports are read too (`project.py`)."""
    from gradguard.analysis.detect import facts_of
    from gradguard.analysis.program import Program
    from gradguard.analysis.project import Project
    from gradguard.analysis.reach import runs_imported_backward
    from gradguard.analysis.screen import screen
    from gradguard.parse import parse_module

    screened = screen(source)
    if screened is not None and not screened.relevant and (path is None or not runs_imported_backward(path, source)):
        return None
    module = parse_module(source)
    project = Project(path) if path is not None else None
    program = Program(module, screened.modules if screened is not None else frozenset(), project)
    program.run()
    facts = facts_of(program, source)
    if describe_row is not None:
        facts.describe_row = describe_row
    return facts


def analyze(source: str, describe_row: Callable[[int], str] | None = None,
            path: str | None = None) -> tuple[Diagnostic, ...]:
    """All findings of all rules for one Python source text (raises `ParseFailure`).

    `describe_row` words a row of `source` for messages ("line 12"; a notebook's engine passes one
    that names the cell). `path`, the file's path, lets the analysis read the project modules the
    file imports.
    """
    return analyze_file(source, describe_row, path).diagnostics


@dataclass(frozen=True)
class Analysis:
    """The findings of one file, and the project modules (path, content digest) they depend on."""

    diagnostics: tuple[Diagnostic, ...]
    dependencies: tuple[tuple[str, str], ...] = ()
    # What the analysis did not follow to the end ("analysis incomplete in train(): step budget exhausted").
    incomplete: tuple[Note, ...] = ()
    # Rows of backward calls reached with a tensor known to carry no graph (what a fix must not cause).
    graphless_backwards: tuple[int, ...] = ()


def analyze_file(source: str, describe_row: Callable[[int], str] | None = None,
                 path: str | None = None) -> Analysis:
    """`analyze`, with what the result depends on and what the analysis left incomplete."""
    from gradguard import fixcheck
    from gradguard.rules import all_rules

    if describe_row is None and not fixcheck.checking() and fixcheck.in_fix_session():
        # The text a fix check just analysed (the next round of --fix): only its fixes are new work.
        plain = fixcheck.plain_analysis(source, path)
        return Analysis(fixcheck.checked(source, plain.diagnostics, path), plain.dependencies, plain.incomplete,
                        plain.graphless_backwards)
    facts = facts_for(source, describe_row, path)
    found: dict[tuple[str, int, int], Diagnostic] = {}
    for rule in all_rules():
        for diagnostic in rule.check(facts) if facts is not None else rule.check_unanalysed(source):
            key = (diagnostic.code, diagnostic.span.start.row, diagnostic.span.start.column)
            found.setdefault(key, diagnostic)
    if facts is None and not found:
        return Analysis(())
    diagnostics = tuple(sorted(found.values(), key=lambda d: (d.span.start, d.code)))
    if not fixcheck.checking():
        diagnostics = fixcheck.checked(source, diagnostics, path)
    if facts is None:
        return Analysis(diagnostics)
    return Analysis(diagnostics, facts.dependencies, facts.incomplete, facts.graphless_backwards)
