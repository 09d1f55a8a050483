"""`--output-format full`: each finding with its source excerpt, related places, and fix as a diff.

    error[GG001]: `total` backward-s through the graph of `loss`, already freed by `loss.backward()`
      --> train.py:41:13
       |
    37 |             loss = criterion(model(x), y)
       |             ----------------------------- `loss` assigned here
    38 |             loss.backward()
       |             --------------- graph freed here
    ...
    41 |             total.backward()
       |             ^^^^^^^^^^^^^^^^
       |
    help: Backward once, through `total` (which includes `loss`) [unsafe fix: needs --unsafe-fixes]
       |
       | --- train.py
       | +++ train.py
       | @@ -37,3 +37,2 @@
       |              loss = criterion(model(x), y)
       | -            loss.backward()
       ...
    note: `gradguard rule GG001` explains repeated-backward
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO

from rich.text import Text

from gradguard.model import (
    Applicability,
    Diagnostic,
    FileError,
    FileResult,
    Severity,
    Span,
)
from gradguard.report import snippet
from gradguard.report._common import (
    Fixed,
    Writer,
    apply_edits,
    cell_source,
    closing_lines,
    display_path,
    position,
    rule_name,
    sorted_diagnostics,
    sorted_errors,
    sorted_results,
)

_STYLES = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow"}


def _location(width: int, arrow: str, path: str, span: Span, cell: int | None) -> Text:
    text = Text(" " * width)
    text.append(arrow, style=snippet.GUTTER_STYLE)
    text.append(f" {path}:{position(span.start.row, span.start.column, cell)}")
    return text


def _groups(diagnostic: Diagnostic) -> list[tuple[int | None, list[snippet.Annotation]]]:
    """The annotations of a finding grouped by the text they point into (notebook cell), primary first."""
    groups: dict[int | None, list[snippet.Annotation]] = {
        diagnostic.cell: [snippet.Annotation(diagnostic.span, "", primary=True)]
    }
    for index, related in enumerate(diagnostic.related):
        cells = diagnostic.related_cells
        cell = cells[index] if index < len(cells) else diagnostic.cell
        groups.setdefault(cell, []).append(snippet.Annotation(related.span, related.message, primary=False))
    primary = groups.pop(diagnostic.cell)
    others = sorted(groups.items(), key=lambda item: item[0] or 0)
    return [(diagnostic.cell, primary), *others]


def _fix_lines(result: FileResult, path: str, diagnostic: Diagnostic, width: int) -> Iterator[Text]:
    fix = diagnostic.fix
    if fix is None:
        return
    how = (
        "safe fix: --fix applies it"
        if fix.applicability is Applicability.SAFE
        else "unsafe fix: needs --unsafe-fixes"
    )
    help_line = Text("help", style="bold cyan")
    help_line.append(f": {fix.message} ")
    help_line.append(f"[{how}]", style="cyan")
    yield help_line
    before = cell_source(result, diagnostic.cell)
    if before is None or not fix.edits:
        return
    label = f"{path}:cell {diagnostic.cell}" if diagnostic.cell is not None else path
    local = [edit for edit in fix.edits if edit.path is None]
    diff: list[str] = []
    if local:
        after = apply_edits(before, local)
        diff.extend(difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=label, tofile=label, n=1
        ))
    # The project module where the cause sits, when the fix edits it too.
    for other in fix.other_files:
        text = _read_text(other)
        if text is None:
            continue
        shown = os.path.normpath(os.path.join(os.path.dirname(path), os.path.relpath(
            other, os.path.dirname(os.path.abspath(result.path)))))
        changed = apply_edits(text, [edit for edit in fix.edits if edit.path == other])
        diff.extend(difflib.unified_diff(
            text.splitlines(keepends=True), changed.splitlines(keepends=True), fromfile=shown, tofile=shown, n=1
        ))
    yield snippet.gutter(width)
    for line in diff:
        shown = line.rstrip("\r\n").expandtabs(snippet.TAB_SIZE)
        style = ""
        if line.startswith(("---", "+++")):
            style = "bold"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("+"):
            style = "green"
        text = snippet.gutter(width)
        text.append(" ")
        text.append(shown, style=style)
        yield text
    yield snippet.gutter(width)


def _read_text(path: str) -> str | None:
    """Another file's text as the analysis read it (UTF-8, a BOM dropped); None when it is gone."""
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None


def diagnostic_block(result: FileResult, path: str, diagnostic: Diagnostic) -> Iterator[Text]:
    """The lines that show one finding."""
    style = _STYLES[diagnostic.severity]
    head = Text(f"{diagnostic.severity.value}[{diagnostic.code}]", style=style)
    head.append(": ")
    head.append(diagnostic.message, style="bold")
    yield head

    groups = _groups(diagnostic)
    sized = []
    for cell, marks in groups:
        source = cell_source(result, cell)
        if source is not None:
            count = len(source.splitlines())
            sized.extend((mark.span.start.row, count) for mark in marks)
    width = snippet.gutter_width(sized)

    for index, (cell, marks) in enumerate(groups):
        source = cell_source(result, cell)
        arrow = "-->" if index == 0 else ":::"
        yield _location(width, arrow, path, marks[0].span, cell)
        if source is None:
            for mark in marks:
                if mark.label:
                    yield Text(f"{' ' * width} = {mark.label}")
            continue
        yield from snippet.render(source, marks, width, style)

    yield from _fix_lines(result, path, diagnostic, width)
    note = Text("note", style="bold")
    note.append(f": `gradguard rule {diagnostic.code}` explains {rule_name(diagnostic.code)}")
    yield note


def error_block(result: FileResult, path: str, error: FileError) -> Iterator[Text]:
    """The lines that show a file gradguard could not lint, with the offending line when there is one."""
    head = Text("error", style="bold red")
    head.append(": ")
    head.append(error.message, style="bold")
    yield head
    if error.row is None:
        yield Text(f"  --> {path}")
        return
    span = Span.of(error.row, error.column or 1, error.row, (error.column or 1) + 1)
    source = result.source
    count = len(source.splitlines()) if source is not None else 0
    width = snippet.gutter_width([(error.row, count)])
    yield _location(width, "-->", path, span, None)
    if source is not None and error.row <= count:
        yield from snippet.render(source, [snippet.Annotation(span, "", primary=True)], width, "bold red")


def emit(
    results: Sequence[FileResult], *, out: TextIO, color: bool, cwd: Path,
    summary: bool = True, fixed: Fixed | None = None,
) -> None:
    """Write every file error and finding as a block, then the `--show-fixes` block and the summary
    (unless `summary` is False)."""
    writer = Writer(out, color)
    for result in sorted_results(results, cwd):
        path = display_path(result.path, cwd)
        for error in sorted_errors(result.errors):
            for line in error_block(result, path, error):
                writer.line(line)
            writer.line()
        for diagnostic in sorted_diagnostics(result.diagnostics):
            for line in diagnostic_block(result, path, diagnostic):
                writer.line(line)
            writer.line()
    for line in closing_lines(results, fixed, summary):
        writer.line(line)
