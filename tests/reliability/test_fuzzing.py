"""Property-based fuzzing of the linter: generated programs never cause an internal error, and
`--fix --unsafe-fixes` output re-parses, is idempotent and changes nothing outside the edited spans.

Two sources of programs: `training_programs` (training-loop-shaped scripts and notebooks built from
random statements, where the analysis and its fixes have the most to do) and hypothesmith (any valid
Python, with a small buggy training loop appended so that the analysis runs on it). The budget is fixed
and derandomized in CI; `GRADGUARD_FUZZ_LONG=1` runs a long random search (see `fuzz_settings`).
"""

from __future__ import annotations

import ast
import json
import tempfile
from itertools import combinations, pairwise
from pathlib import Path

import hypothesmith
import pytest
from click.testing import CliRunner
from hypothesis import assume, given
from hypothesis import strategies as st
from reliability_support import fuzz_long, fuzz_settings
from training_programs import notebooks, programs

from gradguard.cli import main
from gradguard.config import Selection, Settings
from gradguard.engine import Prepared, check_source, prepare, program_diagnostics
from gradguard.fixes import (
    MAX_ROUNDS,
    EditConflict,
    choose_fixes,
    fix_prepared,
    fix_text_round,
    line_starts,
    newline_of,
    to_offset,
)
from gradguard.model import Fix
from gradguard.notebook import dump_notebook, parse_notebook

pytestmark = pytest.mark.slow

SETTINGS = Settings(root=Path(tempfile.gettempdir()))
SELECTION: Selection = SETTINGS.selection("train.py")

# A loop with the plainest bug, so that every hypothesmith program reaches the analysis and has a fix.
BUGGY_TAIL = """
import torch
w = torch.randn(3, requires_grad=True)
for step in range(3):
    loss = (w * 2).sum()
    loss.backward()
    loss.backward()
"""

Replacement = tuple[int, int, str]


def _replacements(text: str, fixes: list[Fix]) -> list[Replacement]:
    """Every edit the fixes propose, as offsets of `text` with the content the engine writes."""
    starts, newline = line_starts(text), newline_of(text)
    found = []
    for fix in fixes:
        for edit in fix.edits:
            try:
                start = to_offset(edit.span.start, starts, text)
                end = to_offset(edit.span.end, starts, text)
            except EditConflict:
                continue  # the engine skips such a fix whole
            content = edit.content
            if newline != "\n":
                content = content.replace("\r\n", "\n").replace("\n", newline)
            found.append((start, end, content))
    return found


def _clusters(edits: list[Replacement]) -> list[tuple[int, int, list[Replacement]]]:
    """Edits grouped into disjoint regions of the text (touching edits share a region)."""
    clusters: list[tuple[int, int, list[Replacement]]] = []
    for edit in sorted(edits):
        if clusters and edit[0] <= clusters[-1][1]:
            start, end, members = clusters[-1]
            clusters[-1] = (start, max(end, edit[1]), [*members, edit])
        else:
            clusters.append((edit[0], edit[1], [edit]))
    return clusters


def _outcomes(text: str, start: int, end: int, members: list[Replacement]) -> set[str]:
    """What a region may become: its text with any set of non-conflicting edits applied."""
    found = set()
    for size in range(len(members) + 1):
        for chosen in combinations(members, size):
            ordered = sorted(chosen)
            if any(a[1] > b[0] or (a[0] == a[1] == b[0] == b[1]) for a, b in pairwise(ordered)):
                continue
            region, cursor = [], start
            for edit_start, edit_end, content in ordered:
                region += [text[cursor:edit_start], content]
                cursor = edit_end
            region.append(text[cursor:end])
            found.add("".join(region))
    return found


def assert_only_edited_spans_changed(before: str, after: str, fixes: list[Fix]) -> None:
    """`after` is `before` with each region under the fixes' edits rewritten by some of those edits, and
    every character outside those regions unchanged."""
    clusters = _clusters(_replacements(before, fixes))
    exact = max((len(members) for _, _, members in clusters), default=0) <= 10

    def matches(index: int, position: int, cursor: int) -> bool:
        if index == len(clusters):
            return after[position:] == before[cursor:]
        start, end, members = clusters[index]
        kept = before[cursor:start]
        if not after.startswith(kept, position):
            return False
        position += len(kept)
        if not exact:  # too many edits in one region to try every subset: any text may stand there
            following = before[end : clusters[index + 1][0]] if index + 1 < len(clusters) else before[end:]
            found = (
                after.find(following, position) if index + 1 < len(clusters) else len(after) - len(following)
            )
            return found >= position and matches(index + 1, found, end)
        return any(
            after.startswith(outcome, position) and matches(index + 1, position + len(outcome), end)
            for outcome in _outcomes(before, start, end, members)
        )

    assert matches(0, 0, 0), "the fixes changed text outside their edits"


def check_fix_properties(text: str, path: str = "train.py") -> str:
    """Fix `text` round by round as `--fix --unsafe-fixes` does, checking each round; returns the result."""
    current = text
    for _ in range(MAX_ROUNDS):
        fixes = choose_fixes(program_diagnostics(Prepared(path, current, "utf-8"), SELECTION), unsafe=True)
        if not fixes:
            break
        new, applied = fix_text_round(current, fixes)
        if applied == 0 or new == current:
            break
        assert_only_edited_spans_changed(current, new, fixes)
        ast.parse(new)  # a fix that breaks the code is a bug, even though the engine would undo it
        current = new
    fixed, _, _, note = fix_prepared(Prepared(path, text, "utf-8"), SELECTION, unsafe=True)
    assert note is None
    assert fixed.source == current
    again, _, applied, _ = fix_prepared(Prepared(path, current, "utf-8"), SELECTION, unsafe=True)
    assert (applied, again.source) == (0, current), "a second --fix changed the file again"
    return current


def assert_linted_without_internal_error(text: str, path: str = "train.py") -> None:
    result = check_source(text, path, SETTINGS)
    assert not [error for error in result.errors if "internal error" in error.message], result.errors


@fuzz_settings(ci_examples=60)
@given(programs())
def test_training_programs_are_linted_without_any_error(source: str) -> None:
    assert check_source(source, "train.py", SETTINGS).errors == ()


@fuzz_settings(ci_examples=30)
@given(programs())
def test_fixes_of_training_programs_reparse_are_idempotent_and_stay_in_their_spans(source: str) -> None:
    check_fix_properties(source)


@fuzz_settings(ci_examples=10)
@given(notebooks())
def test_notebooks_are_linted_and_fixed_cleanly(text: str) -> None:
    assert check_source(text, "nb.ipynb", SETTINGS).errors == ()
    prepared = prepare(text.encode("utf-8"), "nb.ipynb")
    fixed, _, _, note = fix_prepared(prepared, SELECTION, unsafe=True)
    assert note is None
    document, before = json.loads(fixed.source), json.loads(text)
    assert document["metadata"] == before["metadata"]
    assert [cell["cell_type"] for cell in document["cells"]] == [
        cell["cell_type"] for cell in before["cells"]
    ]
    for old, new in zip(before["cells"], document["cells"], strict=True):
        if old["cell_type"] != "code":
            assert old == new
        new["source"] = old["source"]
    # Text outside the code cells' sources is kept byte for byte (indent, escapes, line endings).
    assert dump_notebook(document, text) == text
    ast.parse(parse_notebook(fixed.source).program)
    again, _, applied, _ = fix_prepared(
        prepare(fixed.source.encode("utf-8"), "nb.ipynb"), SELECTION, unsafe=True
    )
    assert (applied, again.source) == (0, fixed.source)


def _hypothesmith_program(snippet: str) -> str:
    text = snippet if snippet.endswith("\n") or not snippet else snippet + "\n"
    text += BUGGY_TAIL
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        assume(False)
    return text


@fuzz_settings(ci_examples=50, long_examples=3000)
@given(hypothesmith.from_grammar())
def test_any_valid_python_is_linted_without_internal_error(snippet: str) -> None:
    text = _hypothesmith_program(snippet)
    assert_linted_without_internal_error(text)
    assert_linted_without_internal_error(snippet)


@fuzz_settings(ci_examples=30, long_examples=2000)
@given(hypothesmith.from_grammar())
def test_fixes_next_to_any_valid_python_stay_in_their_spans(snippet: str) -> None:
    text = _hypothesmith_program(snippet)
    if check_source(text, "train.py", SETTINGS).errors:
        return  # libcst does not parse all of CPython's grammar (a clear error, tested above)
    check_fix_properties(text)


@pytest.mark.skipif(
    not fuzz_long(), reason="hypothesmith.from_node takes seconds per example: long mode only"
)
@fuzz_settings(ci_examples=1, long_examples=300)
@given(hypothesmith.from_node())
def test_libcst_built_programs_are_linted_without_internal_error(snippet: str) -> None:
    assert_linted_without_internal_error(snippet)
    assert_linted_without_internal_error(_hypothesmith_program(snippet))


@fuzz_settings(ci_examples=12, long_examples=300)
@given(programs(), st.sampled_from(("utf-8", "utf-8-sig", "latin-1")))
def test_the_cli_fixes_once_and_for_all(source: str, encoding: str) -> None:
    """Through the real command: no internal error, the written file re-parses, in its encoding, and a
    second `--fix --unsafe-fixes` leaves it byte for byte as it is."""
    header = "# -*- coding: latin-1 -*-\n" if encoding == "latin-1" else ""
    data = (header + source).encode(encoding)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "train.py"
        path.write_bytes(data)
        runner = CliRunner()
        first = runner.invoke(main, ["lint", "--no-cache", "--fix", "--unsafe-fixes", str(path)])
        assert first.exception is None or isinstance(first.exception, SystemExit), first.exception
        assert first.exit_code in (0, 1), first.output
        fixed = path.read_bytes()
        text = fixed.decode(encoding)
        ast.parse(text)
        assert fixed.startswith(b"\xef\xbb\xbf") == (encoding == "utf-8-sig")
        second = runner.invoke(main, ["lint", "--no-cache", "--fix", "--unsafe-fixes", str(path)])
        assert second.exit_code in (0, 1), second.output
        assert path.read_bytes() == fixed
        assert "Fixed" not in second.output
