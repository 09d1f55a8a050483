"""gradguard's findings as LSP data: ranges in UTF-16 code units, diagnostics, edits. No I/O."""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types

from gradguard.model import Diagnostic, Edit, Location, Note, Severity, Span
from gradguard.report._common import NOTE_CODE, rule_url

SOURCE = "gradguard"
_SEVERITY = {Severity.ERROR: types.DiagnosticSeverity.Error, Severity.WARNING: types.DiagnosticSeverity.Warning}


def position(location: Location, lines: Sequence[str]) -> types.Position:
    """A 1-based (row, character column) as an LSP position (0-based line, UTF-16 character)."""
    line = lines[location.row - 1] if 1 <= location.row <= len(lines) else ""
    prefix = line[: max(location.column - 1, 0)]
    extra = max(location.column - 1 - len(line), 0)  # a column past the line's end (an end position)
    return types.Position(line=location.row - 1, character=len(prefix.encode("utf-16-le")) // 2 + extra)


def to_location(pos: types.Position, lines: Sequence[str]) -> Location:
    """An LSP position back as a 1-based (row, character column)."""
    line = lines[pos.line] if 0 <= pos.line < len(lines) else ""
    units = 0
    column = 0
    for char in line:
        if units >= pos.character:
            break
        units += 2 if ord(char) > 0xFFFF else 1
        column += 1
    return Location(pos.line + 1, column + 1)


def to_range(span: Span, lines: Sequence[str]) -> types.Range:
    """A span as an LSP range."""
    return types.Range(start=position(span.start, lines), end=position(span.end, lines))


def text_edit(edit: Edit, lines: Sequence[str]) -> types.TextEdit:
    """One fix edit as an LSP text edit."""
    return types.TextEdit(range=to_range(edit.span, lines), new_text=edit.content)


def diagnostic(
    item: Diagnostic, lines: Sequence[str], uri: str, related_uris: Sequence[str] = (), related_lines: Sequence[Sequence[str]] = ()
) -> types.Diagnostic:
    """A finding as an LSP diagnostic; its related places (freeing call, carrier) as relatedInformation.

    `related_uris`/`related_lines`, one per related place, name the document of each (a notebook's
    other cells); by default every place lies in `uri`.
    """
    related = []
    for index, place in enumerate(item.related):
        where = related_uris[index] if index < len(related_uris) else uri
        text = related_lines[index] if index < len(related_lines) else lines
        related.append(
            types.DiagnosticRelatedInformation(
                location=types.Location(uri=where, range=to_range(place.span, text)), message=place.message
            )
        )
    return types.Diagnostic(
        range=to_range(item.span, lines),
        message=item.message,
        severity=_SEVERITY[item.severity],
        code=item.code,
        code_description=types.CodeDescription(href=rule_url(item.code)),
        source=SOURCE,
        related_information=related or None,
    )


def error_diagnostic(message: str, row: int | None, column: int | None, lines: Sequence[str]) -> types.Diagnostic:
    """A file that could not be linted (a syntax error) as an LSP diagnostic."""
    start = position(Location(row or 1, column or 1), lines)
    return types.Diagnostic(
        range=types.Range(start=start, end=start),
        message=message,
        severity=types.DiagnosticSeverity.Error,
        source=SOURCE,
    )


def note_diagnostic(note: Note, lines: Sequence[str]) -> types.Diagnostic:
    """A part the analysis did not follow to the end, as an information diagnostic at its first line."""
    start = position(Location(note.row or 1, 1), lines)
    return types.Diagnostic(
        range=types.Range(start=start, end=start),
        message=note.message,
        severity=types.DiagnosticSeverity.Information,
        code=NOTE_CODE,
        source=SOURCE,
    )
