"""Everything `gradguard lint` shows: the output formats and `--statistics`.

The only modules of the lint side that print; they read `FileResult`s and write to the stream given.
Colour is used only when the caller asks for it (a terminal without `NO_COLOR`); otherwise no ANSI
code is written. Paths are shown relative to `cwd` when they lie inside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import import_module
from pathlib import Path
from typing import TextIO

from gradguard.config import OUTPUT_FORMATS
from gradguard.model import FileResult
from gradguard.report._common import Fixed, Writer, fixes_listing, note_where, plural

__all__ = ["FORMATS", "Fixed", "emit", "emit_fixed", "emit_statistics", "note_where"]

FORMATS = OUTPUT_FORMATS
# The module of each format, imported only when used (the full format and SARIF load rich and more).
_MODULES = {
    "concise": "concise",
    "full": "full",
    "json": "json_format",
    "json-lines": "json_lines",
    "github": "github",
    "gitlab": "gitlab",
    "junit": "junit",
    "pylint": "pylint",
    "rdjson": "rdjson",
    "sarif": "sarif",
}


def _module(fmt: str) -> ModuleType:
    return import_module(f"{__name__}.{_MODULES[fmt]}")


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
    if fmt not in _MODULES:
        raise ValueError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if fmt in ("concise", "full"):
        _module(fmt).emit(results, out=out, color=color, cwd=cwd, summary=summary, fixed=fixed)
    else:  # the machine formats: no colour, no summary
        _module(fmt).emit(results, out=out, cwd=cwd)


def emit_statistics(
    results: Sequence[FileResult], *, out: TextIO, color: bool, summary: bool = True, fixed: Fixed | None = None
) -> None:
    """Write the count of findings per rule (ruff's `--statistics`), then the summary unless `summary` is False."""
    from gradguard.report import statistics

    statistics.emit(results, out=out, color=color, summary=summary, fixed=fixed)


def emit_fixed(fixed: Fixed, *, out: TextIO, color: bool) -> None:
    """`--fix-only`'s whole report: the `--show-fixes` block when asked, then "Fixed N findings."."""
    writer = Writer(out, color)
    for line in fixes_listing(fixed) if fixed.listed else []:
        writer.line(line)
    writer.line(f"Fixed {plural(len(fixed.codes), 'finding')}.")
