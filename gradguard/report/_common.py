"""What every output format shares: paths as users see them, ordering, counts, catalogue look-ups, styled lines."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from gradguard import catalogue
from gradguard.model import (
    Applicability,
    Diagnostic,
    Edit,
    FileError,
    FileResult,
    Note,
    Severity,
)
from gradguard.report.styled import Line

if TYPE_CHECKING:
    from rich.text import Text

# The pseudo rule of inputs that could not be linted (ruff 0.17 calls its own `invalid-syntax`).
FILE_ERROR_CODE = "file-error"
# The pseudo rule of the parts of a file the analysis did not follow to the end (findings there may be
# missing): informational in every format, never a failure of the run.
NOTE_CODE = "analysis-incomplete"


class Writer:
    """Writes lines to `out`: styles become ANSI codes only when colour is on, plain text otherwise.

    Lines are never wrapped, padded or tab-expanded, so the output stays exact for tools that parse it. A
    `Line` is written without rich; a rich `Text` (the full format's blocks) loads rich when coloured.
    """

    def __init__(self, out: TextIO, color: bool) -> None:
        self._out = out
        self._color = color
        self._console: Any = None

    def line(self, text: Line | Text | str = "") -> None:
        """Write one line (a trailing newline is added)."""
        if isinstance(text, str):
            text = Line(text)
        if not self._color:
            self._out.write(text.plain + "\n")
        elif isinstance(text, Line):
            self._out.write(text.ansi() + "\n")
        else:
            self._write_rich(text)
            self._out.write("\n")

    def _write_rich(self, text: Text) -> None:
        from rich.color import ColorSystem
        from rich.console import Console
        from rich.segment import Segment

        if self._console is None:
            self._console = Console(
                file=self._out, force_terminal=True, color_system="standard", no_color=False, legacy_windows=False
            )
        # Text.render leaves the text's own style to the caller: apply it under the spans' styles.
        base = self._console.get_style(text.style) if text.style else None
        for segment in Segment.apply_style(text.render(self._console, end=""), style=base):
            if segment.style:
                self._out.write(segment.style.render(segment.text, color_system=ColorSystem.STANDARD))
            else:
                self._out.write(segment.text)


def absolute_path(path: str, cwd: Path) -> str:
    """`path` made absolute against `cwd`, normalised but with symlinks kept as the user named them."""
    return os.path.normpath(os.path.join(os.path.abspath(cwd), path))


def display_path(path: str, cwd: Path) -> str:
    """`path` relative to `cwd` when it lies inside it (forward slashes), else absolute."""
    absolute = Path(absolute_path(path, cwd))
    try:
        relative = absolute.relative_to(os.path.abspath(cwd))
    except ValueError:
        return str(absolute)
    return relative.as_posix() or "."


def sorted_results(results: Sequence[FileResult], cwd: Path) -> list[FileResult]:
    """Results in a stable order (by displayed path), whatever order the parallel runner finished in."""
    return sorted(results, key=lambda result: display_path(result.path, cwd))


def sorted_diagnostics(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Diagnostics by cell, position, then code."""
    return sorted(diagnostics, key=lambda d: (d.cell or 0, d.span.start, d.span.end, d.code, d.message))


def sorted_errors(errors: Iterable[FileError]) -> list[FileError]:
    """File errors by line (those without one first), then message."""
    return sorted(errors, key=lambda e: (e.row or 0, e.column or 0, e.message))


def sorted_notes(notes: Iterable[Note]) -> list[Note]:
    """Notes by cell and row (those of the whole file first), then message."""
    return sorted(notes, key=lambda n: (n.cell or 0, n.row or 0, n.message))


def note_where(note: Note) -> str:
    """Where a note starts in words: `12`, `cell 3:4`, or "" for the whole file."""
    if note.row is None:
        return ""
    return f"cell {note.cell}:{note.row}" if note.cell is not None else str(note.row)


def rule_doc(code: str) -> catalogue.RuleDoc | None:
    """The catalogue document of `code`, or None for a code the catalogue does not hold."""
    try:
        return catalogue.get(code)
    except KeyError:
        return None


def rule_name(code: str) -> str:
    """The kebab-case name of a rule (its code when the catalogue does not know it)."""
    doc = rule_doc(code)
    return doc.name if doc else code


def rule_url(code: str) -> str:
    """Where a rule's document is published."""
    doc = rule_doc(code)
    return doc.url if doc else catalogue.DOCS_URL.format(code=code)


def display_body(doc: catalogue.RuleDoc) -> str:
    """A rule document's Markdown body as readers see it: the test markers `# [GG001]` removed."""
    return catalogue.MARKER.sub("", doc.body).strip() + "\n"


def is_safe_fix(diagnostic: Diagnostic) -> bool:
    """True when `--fix` alone applies this diagnostic's fix."""
    return diagnostic.fix is not None and diagnostic.fix.applicability is Applicability.SAFE


def is_unsafe_fix(diagnostic: Diagnostic) -> bool:
    """True when this diagnostic's fix needs `--unsafe-fixes`."""
    return diagnostic.fix is not None and diagnostic.fix.applicability is Applicability.UNSAFE


def cell_source(result: FileResult, cell: int | None) -> str | None:
    """The text rows of a location refer to: the file's source, or one notebook cell's."""
    if cell is None:
        return result.source
    for index, source in result.cells:
        if index == cell:
            return source
    return None


def position(row: int, column: int, cell: int | None) -> str:
    """`row:column`, or ruff's `cell N:row:column` inside a notebook."""
    return f"cell {cell}:{row}:{column}" if cell is not None else f"{row}:{column}"


def apply_edits(source: str, edits: Iterable[Edit]) -> str:
    """`source` with `edits` applied (1-based rows and character columns; edits must not overlap)."""
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(row: int, column: int) -> int:
        if row > len(starts) - 1:
            return len(source)
        return min(starts[row - 1] + column - 1, len(source))

    ordered = sorted(edits, key=lambda edit: (edit.span.start, edit.span.end), reverse=True)
    text = source
    for edit in ordered:
        start = offset(edit.span.start.row, edit.span.start.column)
        end = offset(edit.span.end.row, edit.span.end.column)
        text = text[:start] + edit.content + text[end:]
    return text


def plural(count: int, word: str) -> str:
    """`1 error`, `2 errors`."""
    return f"{count} {word}{'' if count == 1 else 's'}"


@dataclass(frozen=True)
class Fixed:
    """What `--fix` removed, for the closing lines: per file as shown, the codes of the findings fixed."""

    files: tuple[tuple[str, tuple[str, ...]], ...] = ()
    listed: bool = False  # `--show-fixes`: list them per file and rule before the summary

    @property
    def codes(self) -> tuple[str, ...]:
        """The code of every finding fixed."""
        return tuple(code for _, codes in self.files for code in codes)


@dataclass(frozen=True)
class Counts:
    """What a run found, for the summary line and statistics."""

    errors: int
    warnings: int
    safe_fixes: int
    unsafe_fixes: int
    failed_files: int

    @classmethod
    def of(cls, results: Sequence[FileResult]) -> Counts:
        """Count the findings and unlintable files of `results`."""
        diagnostics = [d for result in results for d in result.diagnostics]
        return cls(
            errors=sum(d.severity is Severity.ERROR for d in diagnostics),
            warnings=sum(d.severity is Severity.WARNING for d in diagnostics),
            safe_fixes=sum(is_safe_fix(d) for d in diagnostics),
            unsafe_fixes=sum(is_unsafe_fix(d) for d in diagnostics),
            failed_files=sum(bool(result.errors) for result in results),
        )


def fixes_listing(fixed: Fixed) -> list[Line]:
    """ruff's `--show-fixes` block: per file, how many findings of each rule the fixes removed."""
    from collections import Counter

    if not fixed.codes:
        return []
    lines = [Line(""), Line(f"Fixed {plural(len(fixed.codes), 'finding')}:", style="bold")]
    for path, codes in sorted(fixed.files):
        if codes:
            lines.append(Line(f"- {path}:"))
            for code, count in sorted(Counter(codes).items()):
                lines.append(Line(f"    {count} \u00d7 {code} ({rule_name(code)})"))
    lines.append(Line(""))
    return lines


def summary_lines(results: Sequence[FileResult], fixed: Fixed | None = None) -> list[Line]:
    """The closing lines of the text formats: what was found (and fixed), what `--fix` can do, which
    files failed; after `--fix`, ruff's "Found 3 errors (2 fixed, 1 remaining)."."""
    counts = Counts.of(results)
    fixed_codes = fixed.codes if fixed is not None else ()
    errors, warnings = counts.errors, counts.warnings
    for code in fixed_codes:
        doc = rule_doc(code)
        if doc is not None and doc.severity is Severity.WARNING:
            warnings += 1
        else:
            errors += 1
    lines: list[Line] = []
    if errors or warnings:
        found = plural(errors, "error") if errors or not warnings else ""
        if warnings:
            found += f"{' and ' if found else ''}{plural(warnings, 'warning')}"
        parts = []
        if fixed_codes:
            parts.append(f"{len(fixed_codes)} fixed, {counts.errors + counts.warnings} remaining")
        if counts.safe_fixes:
            parts.append(f"{counts.safe_fixes} fixable with --fix")
        if counts.unsafe_fixes:
            more = "more" if counts.safe_fixes else "fixable"
            parts.append(f"{counts.unsafe_fixes} {more} with --unsafe-fixes")
        suffix = f" ({', '.join(parts)})" if parts else ""
        lines.append(Line(f"Found {found}{suffix}.", style="bold"))
    if counts.failed_files:
        lines.append(Line(f"{plural(counts.failed_files, 'file')} could not be linted.", style="bold red"))
    if not lines:
        lines.append(Line("All checks passed!", style="bold green"))
    return lines


def closing_lines(results: Sequence[FileResult], fixed: Fixed | None, summary: bool) -> list[Line]:
    """What the text formats write after the findings: the `--show-fixes` block, then the summary."""
    lines = fixes_listing(fixed) if fixed is not None and fixed.listed else []
    return lines + (summary_lines(results, fixed) if summary else [])
