"""`--output-format json`: an array with ruff's field names, so tools reading ruff's JSON output read it.

Every entry has ruff 0.17's fields, keys sorted and indented by two like ruff's: `cell`, `code`,
`end_location`, `filename` (absolute), `fix`, `location`, `message`, `name`, `noqa_row`, `severity`,
`url`; gradguard adds `related`: [{`filename`, `location`, `end_location`, `cell`, `message`}].
Rows and columns are 1-based; inside a notebook they count within the cell named by `cell`.

A file that could not be linted (syntax error, undecodable or unreadable file, bad notebook) is an
entry like ruff 0.17's `invalid-syntax` ones: `code` and `name` are `"file-error"`, `fix`, `noqa_row` and
`url` are null, and `location` is 1:1 when the problem has no line, so consumers always find a position.

A part of a file the analysis did not follow to the end is an entry of the same shape with `code` and
`name` `"analysis-incomplete"` and `severity` `"note"`, at the row where that part starts (1:1 for the
whole file): findings there may be missing, and consumers that count errors can skip it by severity.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from gradguard.model import Diagnostic, Edit, FileError, FileResult, Fix, Location, Note, Span
from gradguard.report._common import (
    FILE_ERROR_CODE,
    NOTE_CODE,
    absolute_path,
    rule_name,
    rule_url,
    sorted_diagnostics,
    sorted_errors,
    sorted_notes,
    sorted_results,
)


def _location(location: Location) -> dict[str, int]:
    return {"row": location.row, "column": location.column}


def _fix(fix: Fix | None) -> dict[str, Any] | None:
    if fix is None:
        return None
    return {
        "applicability": fix.applicability.value,
        "message": fix.message,
        "edits": [_edit(edit) for edit in fix.edits],
    }


def _edit(edit: Edit) -> dict[str, Any]:
    """One edit with ruff's keys; an edit of another file (the project module where the cause sits)
    also names that file, absolute, as `filename`."""
    entry: dict[str, Any] = {
        "content": edit.content,
        "location": _location(edit.span.start),
        "end_location": _location(edit.span.end),
    }
    if edit.path is not None:
        entry["filename"] = edit.path
    return entry


def diagnostic_entry(filename: str, diagnostic: Diagnostic) -> dict[str, Any]:
    """One finding as a ruff-shaped JSON object (`filename` already absolute)."""
    cells = diagnostic.related_cells
    return {
        "cell": diagnostic.cell,
        "code": diagnostic.code,
        "end_location": _location(diagnostic.span.end),
        "filename": filename,
        "fix": _fix(diagnostic.fix),
        "location": _location(diagnostic.span.start),
        "message": diagnostic.message,
        "name": rule_name(diagnostic.code),
        "noqa_row": diagnostic.span.start.row,
        "related": [
            {
                "cell": cells[index] if index < len(cells) else diagnostic.cell,
                "end_location": _location(related.span.end),
                "filename": filename,
                "location": _location(related.span.start),
                "message": related.message,
            }
            for index, related in enumerate(diagnostic.related)
        ],
        "severity": diagnostic.severity.value,
        "url": rule_url(diagnostic.code),
    }


def error_entry(filename: str, error: FileError) -> dict[str, Any]:
    """A file that could not be linted, shaped like ruff's `invalid-syntax` entries."""
    row = error.row or 1
    column = error.column or 1
    span = Span.of(row, column, row, column)
    return {
        "cell": None,
        "code": FILE_ERROR_CODE,
        "end_location": _location(span.end),
        "filename": filename,
        "fix": None,
        "location": _location(span.start),
        "message": error.message,
        "name": FILE_ERROR_CODE,
        "noqa_row": None,
        "related": [],
        "severity": "error",
        "url": None,
    }


def note_entry(filename: str, note: Note) -> dict[str, Any]:
    """A part the analysis did not follow to the end, shaped like the other entries."""
    row = note.row or 1
    return {
        "cell": note.cell,
        "code": NOTE_CODE,
        "end_location": {"row": row, "column": 1},
        "filename": filename,
        "fix": None,
        "location": {"row": row, "column": 1},
        "message": note.message,
        "name": NOTE_CODE,
        "noqa_row": None,
        "related": [],
        "severity": "note",
        "url": None,
    }


def entries(results: Sequence[FileResult], cwd: Path) -> list[dict[str, Any]]:
    """All entries of a run, file by file: file errors, findings in source order, then notes."""
    out: list[dict[str, Any]] = []
    for result in sorted_results(results, cwd):
        filename = absolute_path(result.path, cwd)
        out.extend(error_entry(filename, error) for error in sorted_errors(result.errors))
        out.extend(diagnostic_entry(filename, d) for d in sorted_diagnostics(result.diagnostics))
        out.extend(note_entry(filename, note) for note in sorted_notes(result.incomplete))
    return out


def emit(results: Sequence[FileResult], *, out: TextIO, cwd: Path) -> None:
    """Write the JSON array (`[]` when nothing was found) and a final newline."""
    json.dump(entries(results, cwd), out, indent=2, sort_keys=True, ensure_ascii=False)
    out.write("\n")
