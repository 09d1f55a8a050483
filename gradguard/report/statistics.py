"""`--statistics`: how many findings of each rule, ruff's tab-separated shape, then the summary.

    3	GG001	[*] repeated-backward (2 fixable)
    1	GG009	[ ] unneeded-retain-graph (1 fixable with --unsafe-fixes)
    1	     	[ ] file-error
    1	     	[ ] analysis-incomplete
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

from gradguard.model import FileResult
from gradguard.report._common import (
    FILE_ERROR_CODE,
    NOTE_CODE,
    Fixed,
    Writer,
    closing_lines,
    is_safe_fix,
    is_unsafe_fix,
    rule_name,
)
from gradguard.report.styled import Line


@dataclass(frozen=True)
class Statistic:
    """The findings of one rule (or, with an empty code, the files that could not be linted or the parts
    of files the analysis did not follow to the end)."""

    code: str
    name: str
    count: int
    safe_fixes: int
    unsafe_fixes: int


def statistics(results: Sequence[FileResult]) -> list[Statistic]:
    """One entry per rule found, most frequent first, then by code."""
    by_code: dict[str, list[int]] = {}
    for result in results:
        for diagnostic in result.diagnostics:
            counts = by_code.setdefault(diagnostic.code, [0, 0, 0])
            counts[0] += 1
            counts[1] += is_safe_fix(diagnostic)
            counts[2] += is_unsafe_fix(diagnostic)
    stats = [Statistic(code, rule_name(code), *counts) for code, counts in by_code.items()]
    errors = sum(len(result.errors) for result in results)
    if errors:
        stats.append(Statistic("", FILE_ERROR_CODE, errors, 0, 0))
    notes = sum(len(result.incomplete) for result in results)
    if notes:
        stats.append(Statistic("", NOTE_CODE, notes, 0, 0))
    return sorted(stats, key=lambda stat: (-stat.count, stat.code))


def _fixable(stat: Statistic) -> str:
    parts = []
    if stat.safe_fixes:
        parts.append(f"{stat.safe_fixes} fixable")
    if stat.unsafe_fixes:
        parts.append(f"{stat.unsafe_fixes} {'more ' if stat.safe_fixes else 'fixable '}with --unsafe-fixes")
    return f" ({', '.join(parts)})" if parts else ""


def emit(
    results: Sequence[FileResult], *, out: TextIO, color: bool,
    summary: bool = True, fixed: Fixed | None = None,
) -> None:
    """Write one line per rule: count, code, `[*]` when `--fix` can fix some, name and fixable counts."""
    writer = Writer(out, color)
    stats = statistics(results)
    count_width = max((len(str(stat.count)) for stat in stats), default=1)
    code_width = max((len(stat.code) for stat in stats), default=0)
    any_fixable = any(stat.safe_fixes for stat in stats)
    for stat in stats:
        text = Line(f"{stat.count:>{count_width}}", style="bold")
        text.append("\t")
        text.append(f"{stat.code:<{code_width}}", style="bold red")
        text.append("\t")
        if any_fixable:
            text.append("[*] " if stat.safe_fixes else "[ ] ", style="cyan")
        text.append(stat.name)
        text.append(_fixable(stat))
        writer.line(text)
    for line in closing_lines(results, fixed, summary):
        writer.line(line)
