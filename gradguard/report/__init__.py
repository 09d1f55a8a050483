"""Everything `gradguard lint` shows: the output formats and `--statistics`.

The only modules of the lint side that print; they read `FileResult`s and write to the stream given.
Colour is used only when the caller asks for it (a terminal without `NO_COLOR`); otherwise no ANSI
code is written. Paths are shown relative to `cwd` when they lie inside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from gradguard.config import OUTPUT_FORMATS
from gradguard.model import FileResult
from gradguard.report import (
    concise,
    full,
    github,
    gitlab,
    json_format,
    json_lines,
    junit,
    pylint,
    rdjson,
    sarif,
    statistics,
)
from gradguard.report._common import Fixed, Writer, fixes_listing, note_where, plural

__all__ = ["FORMATS", "Fixed", "emit", "emit_fixed", "emit_statistics", "note_where"]

FORMATS = OUTPUT_FORMATS
# The formats that write to a stream without colour or a summary: `emit(results, out=..., cwd=...)`.
_PLAIN = {
    "json": json_format,
    "json-lines": json_lines,
    "github": github,
    "gitlab": gitlab,
    "junit": junit,
    "pylint": pylint,
    "rdjson": rdjson,
    "sarif": sarif,
}


def emit(
    results: Sequence[FileResult],
    *,
    fmt: str,
    out: TextIO,
    color: bool,
    cwd: Path,
    summary: bool = True,
    fixed: Fixed | None = None,
) -> None:
    """Write `results` to `out` in format `fmt` (one of `FORMATS`; ValueError otherwise).

    The text formats (concise, full) end with a summary line unless `summary` is False (`--quiet`);
    after `--fix`, `fixed` says what the fixes removed (listed when `--show-fixes`).
    """
    if fmt == "concise":
        concise.emit(results, out=out, color=color, cwd=cwd, summary=summary, fixed=fixed)
    elif fmt == "full":
        full.emit(results, out=out, color=color, cwd=cwd, summary=summary, fixed=fixed)
    elif fmt in _PLAIN:
        _PLAIN[fmt].emit(results, out=out, cwd=cwd)
    else:
        raise ValueError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}")


def emit_statistics(
    results: Sequence[FileResult], *, out: TextIO, color: bool, summary: bool = True, fixed: Fixed | None = None
) -> None:
    """Write the count of findings per rule (ruff's `--statistics`), then the summary unless `summary` is False."""
    statistics.emit(results, out=out, color=color, summary=summary, fixed=fixed)


def emit_fixed(fixed: Fixed, *, out: TextIO, color: bool) -> None:
    """`--fix-only`'s whole report: the `--show-fixes` block when asked, then "Fixed N findings."."""
    writer = Writer(out, color)
    for line in fixes_listing(fixed) if fixed.listed else []:
        writer.line(line)
    writer.line(f"Fixed {plural(len(fixed.codes), 'finding')}.")
