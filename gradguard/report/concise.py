"""`--output-format concise` (the default): one line per finding, ruff's shape.

    train.py:42:9: GG001 [*] `loss` is backward-ed again after its graph was freed
    explore.ipynb:cell 3:2:1: GG003 ...
    broken.py:3:7: error: syntax error: invalid syntax
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from gradguard.model import Diagnostic, FileError, FileResult, Severity
from gradguard.report._common import (
    Fixed,
    Writer,
    closing_lines,
    display_path,
    is_safe_fix,
    position,
    sorted_diagnostics,
    sorted_errors,
    sorted_results,
)
from gradguard.report.styled import Line


def diagnostic_line(path: str, diagnostic: Diagnostic) -> Line:
    """`path:row:col: CODE [*] message` (`path:cell N:row:col: ...` in a notebook)."""
    start = diagnostic.span.start
    text = Line()
    text.append(path, style="bold")
    text.append(":", style="cyan")
    text.append(position(start.row, start.column, diagnostic.cell))
    text.append(": ", style="cyan")
    text.append(diagnostic.code, style="bold red" if diagnostic.severity is Severity.ERROR else "bold yellow")
    text.append(" ")
    if is_safe_fix(diagnostic):
        text.append("[*] ", style="cyan")
    text.append(diagnostic.message)
    return text


def error_line(path: str, error: FileError) -> Line:
    """`path:row:col: error: message`, or `path: error: message` when the problem has no line."""
    text = Line()
    text.append(path, style="bold")
    if error.row is not None:
        text.append(":", style="cyan")
        text.append(f"{error.row}:{error.column or 1}")
    text.append(": ", style="cyan")
    text.append("error", style="bold red")
    text.append(": ")
    text.append(error.message)
    return text


def emit(
    results: Sequence[FileResult], *, out: TextIO, color: bool, cwd: Path,
    summary: bool = True, fixed: Fixed | None = None,
) -> None:
    """Write every file error and finding, one per line, then the `--show-fixes` block and the summary
    (unless `summary` is False)."""
    writer = Writer(out, color)
    for result in sorted_results(results, cwd):
        path = display_path(result.path, cwd)
        for error in sorted_errors(result.errors):
            writer.line(error_line(path, error))
        for diagnostic in sorted_diagnostics(result.diagnostics):
            writer.line(diagnostic_line(path, diagnostic))
    for line in closing_lines(results, fixed, summary):
        writer.line(line)
