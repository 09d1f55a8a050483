"""What each output format prints for hand-made results: snapshots, colour, paths, order, excerpts."""

from __future__ import annotations

import io
import random
import re
from pathlib import Path

import pytest
from report_samples import (
    CWD,
    TRAIN_SCRIPT,
    all_results,
    clean_result,
    span_of,
    training_result,
)

import gradguard
from gradguard import report
from gradguard.model import Diagnostic, Edit, FileResult, Related, Severity, Span
from gradguard.report._common import apply_edits, display_path

pytestmark = pytest.mark.usefixtures("sample_catalogue")


def render(results: list[FileResult], fmt: str, *, color: bool = False, cwd: Path = CWD) -> str:
    out = io.StringIO()
    report.emit(results, fmt=fmt, out=out, color=color, cwd=cwd)
    return out.getvalue()


@pytest.mark.parametrize("fmt", report.FORMATS)
def test_every_format_matches_its_snapshot(fmt: str, snapshot) -> None:
    text = render(all_results(), fmt)
    # The tool's version is not part of the format; keep the snapshot stable across releases.
    text = text.replace(f'"version": "{gradguard.__version__}"', '"version": "<version>"')
    snapshot(f"all_{fmt}", text)


def test_statistics_match_their_snapshot(snapshot) -> None:
    out = io.StringIO()
    report.emit_statistics(all_results(), out=out, color=False)
    snapshot("all_statistics", out.getvalue())


@pytest.mark.parametrize("fmt", report.FORMATS)
def test_no_escape_codes_without_colour(fmt: str) -> None:
    assert "\x1b" not in render(all_results(), fmt, color=False)


@pytest.mark.parametrize("fmt", ["concise", "full"])
def test_colour_when_asked_and_same_text_underneath(fmt: str) -> None:
    coloured = render(all_results(), fmt, color=True)
    assert "\x1b[" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == render(all_results(), fmt, color=False)


@pytest.mark.parametrize("fmt", ["json", "json-lines", "github", "gitlab", "junit", "pylint", "rdjson", "sarif"])
def test_machine_formats_never_colour(fmt: str) -> None:
    assert "\x1b" not in render(all_results(), fmt, color=True)


def test_statistics_colour_only_when_asked() -> None:
    plain, coloured = io.StringIO(), io.StringIO()
    report.emit_statistics(all_results(), out=plain, color=False)
    report.emit_statistics(all_results(), out=coloured, color=True)
    assert "\x1b" not in plain.getvalue()
    assert "\x1b[" in coloured.getvalue()
    assert "\t" in coloured.getvalue()  # ruff's tab-separated columns survive colouring


@pytest.mark.parametrize("fmt", report.FORMATS)
def test_output_does_not_depend_on_the_order_results_arrive_in(fmt: str) -> None:
    results = all_results()
    expected = render(results, fmt)
    for seed in range(3):
        shuffled = results[:]
        random.Random(seed).shuffle(shuffled)
        assert render(shuffled, fmt) == expected


def test_unknown_format_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="concise, full, json, json-lines, github, gitlab, junit, pylint, rdjson, sarif"):
        render(all_results(), "xml")


def test_formats_are_the_documented_ones() -> None:
    assert report.FORMATS == (
        "concise",
        "full",
        "json",
        "json-lines",
        "github",
        "gitlab",
        "junit",
        "pylint",
        "rdjson",
        "sarif",
    )


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        ("train.py", "train.py"),
        ("./src/../train.py", "train.py"),
        ("/project/pkg/model.py", "pkg/model.py"),
        ("/elsewhere/model.py", "/elsewhere/model.py"),
        ("/projectile/model.py", "/projectile/model.py"),
    ],
)
def test_paths_are_relative_to_cwd_only_inside_it(path: str, shown: str) -> None:
    assert display_path(path, CWD) == shown
    result = FileResult(path=path, diagnostics=training_result().diagnostics, source=TRAIN_SCRIPT)
    assert render([result], "concise").startswith(f"{shown}:41:13: GG001 ")


def test_clean_run_says_so() -> None:
    assert render([clean_result()], "concise") == "All checks passed!\n"
    assert render([], "full") == "All checks passed!\n"


def test_concise_marks_only_fixes_that_fix_applies() -> None:
    lines = render([training_result()], "concise").splitlines()
    assert lines[0].startswith("train.py:41:13: GG001 `total`")  # unsafe fix: no [*]
    assert lines[1].startswith("train.py:43:13: GG010 [*] `history`")
    assert lines[2] == "Found 1 error and 1 warning (1 fixable with --fix, 1 more with --unsafe-fixes)."


def test_full_shows_the_fixed_code_as_a_diff() -> None:
    text = render([training_result()], "full")
    assert "   | -            history.append(loss)\n   | +            history.append(loss.item())\n" in text
    assert "[unsafe fix: needs --unsafe-fixes]" in text
    assert "[safe fix: --fix applies it]" in text


def test_full_marks_the_right_characters_after_tabs_and_wide_characters() -> None:
    source = "def f(loss):\n\tlabel = '日本語'; loss.backward()\n"
    diagnostic = Diagnostic(
        code="GG001",
        message="m",
        span=span_of(source, "loss.backward()"),
        severity=Severity.ERROR,
    )
    lines = render([FileResult("t.py", (diagnostic,), source=source)], "full").splitlines()
    code_line = next(line for line in lines if line.startswith(" 2 |"))
    marker = lines[lines.index(code_line) + 1]
    assert code_line == " 2 |     label = '日本語'; loss.backward()"
    # 日本語 takes two terminal columns per character: the carets sit under `loss.backward()`.
    assert marker == "   |" + " " * 23 + "^" * 15


def test_full_spans_over_several_lines_mark_their_first_line() -> None:
    source = "loss.backward(\n    retain_graph=False,\n)\n"
    diagnostic = Diagnostic("GG001", "m", Span.of(1, 1, 3, 2), Severity.ERROR)
    text = render([FileResult("t.py", (diagnostic,), source=source)], "full")
    assert " 1 | loss.backward(\n   | ^^^^^^^^^^^^^^\n 2 |     retain_graph=False,\n" in text


def test_full_far_apart_places_are_separated() -> None:
    source = "".join(f"x{row} = {row}\n" for row in range(1, 31))
    diagnostic = Diagnostic(
        "GG001",
        "m",
        Span.of(28, 1, 28, 4),
        Severity.ERROR,
        related=(Related(Span.of(3, 1, 3, 3), "graph freed here"),),
    )
    lines = render([FileResult("t.py", (diagnostic,), source=source)], "full").splitlines()
    assert "..." in lines
    assert lines[lines.index("...") - 1] == " 5 | x5 = 5"
    assert lines[lines.index("...") + 1] == "26 | x26 = 26"


def test_apply_edits_handles_insertions_deletions_and_several_edits() -> None:
    source = "a = 1\nb = 2\nc = 3"
    edits = (
        Edit(Span.of(1, 5, 1, 6), "10"),
        Edit(Span.of(2, 1, 3, 1), ""),
        Edit(Span.of(3, 6, 3, 6), "  # end"),
    )
    assert apply_edits(source, edits) == "a = 10\nc = 3  # end"
    assert apply_edits(source, ()) == source


@pytest.mark.parametrize("fmt", ["concise", "full"])
def test_quiet_runs_print_no_summary(fmt: str) -> None:
    out = io.StringIO()
    report.emit(all_results(), fmt=fmt, out=out, color=False, cwd=CWD, summary=False)
    assert "Found" not in out.getvalue() and "could not be linted" not in out.getvalue()
    assert out.getvalue() == render(all_results(), fmt).rsplit("Found ", 1)[0]
    stats = io.StringIO()
    report.emit_statistics(all_results(), out=stats, color=False, summary=False)
    assert stats.getvalue().splitlines()[-1] == "1\tGG010\t[*] graph-kept-for-logging (1 fixable)"


def test_colour_reaches_lines_styled_as_a_whole() -> None:
    assert render([clean_result()], "concise", color=True) == "\x1b[1;32mAll checks passed!\x1b[0m\n"
