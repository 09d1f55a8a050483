"""`--output-format rdjson`: reviewdog's Diagnostic Format, for `reviewdog -f=rdjson`.

One `DiagnosticResult` object: `source`, `severity`, and `diagnostics`, each with `message`, `location`
(`path`, `range` with 1-based lines and, as the format requires, columns counted in UTF-8 bytes, the end
exclusive), `severity`, `code` (`value`, `url`) and, for a safe fix, `suggestions` that reviewdog offers
as a suggested change. A notebook finding has no line in the `.ipynb` file: it is placed on the file,
its cell and line leading the message. A part of a file the analysis did not follow to the end is an
`INFO` diagnostic (`analysis-incomplete`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from gradguard.model import Diagnostic, FileResult, Location, Severity
from gradguard.report._common import (
    FILE_ERROR_CODE,
    NOTE_CODE,
    cell_source,
    display_path,
    is_safe_fix,
    position,
    rule_url,
    sorted_diagnostics,
    sorted_errors,
    sorted_notes,
    sorted_results,
)

SOURCE = {"name": "gradguard", "url": "https://gradguard.dev"}
_SEVERITY = {Severity.ERROR: "ERROR", Severity.WARNING: "WARNING"}


def _position(location: Location, lines: list[str]) -> dict[str, int]:
    """A character column as the byte column reviewdog reads."""
    line = lines[location.row - 1] if 1 <= location.row <= len(lines) else ""
    column = len(line[: location.column - 1].encode("utf-8", "surrogatepass")) + 1
    column += max(0, location.column - 1 - len(line))  # past the end of a line (an end position)
    return {"line": location.row, "column": column}


def _range(start: Location, end: Location, lines: list[str]) -> dict[str, Any]:
    return {"start": _position(start, lines), "end": _position(end, lines)}


def diagnostic(path: str, item: Diagnostic, source: str | None) -> dict[str, Any]:
    """One finding as an rdjson `Diagnostic`."""
    lines = source.splitlines() if source is not None else []
    entry: dict[str, Any] = {
        "code": {"url": rule_url(item.code), "value": item.code},
        "message": item.message,
        "severity": _SEVERITY[item.severity],
    }
    if item.cell is None:
        entry["location"] = {"path": path, "range": _range(item.span.start, item.span.end, lines)}
        # A suggestion has no file of its own: a fix that also edits another file is not one.
        if is_safe_fix(item) and item.fix is not None and not item.fix.other_files:
            entry["suggestions"] = [
                {"range": _range(edit.span.start, edit.span.end, lines), "text": edit.content}
                for edit in item.fix.edits
            ]
    else:
        where = position(item.span.start.row, item.span.start.column, item.cell)
        entry["location"] = {"path": path}
        entry["message"] = f"{where}: {item.message}"
    return entry


def result_object(results: Sequence[FileResult], cwd: Path) -> dict[str, Any]:
    """The whole `DiagnosticResult` of a run."""
    out: list[dict[str, Any]] = []
    for result in sorted_results(results, cwd):
        path = display_path(result.path, cwd)
        for error in sorted_errors(result.errors):
            location: dict[str, Any] = {"path": path}
            if error.row is not None:
                location["range"] = {"start": {"line": error.row, "column": error.column or 1}}
            out.append(
                {
                    "code": {"value": FILE_ERROR_CODE},
                    "location": location,
                    "message": error.message,
                    "severity": "ERROR",
                }
            )
        for item in sorted_diagnostics(result.diagnostics):
            out.append(diagnostic(path, item, cell_source(result, item.cell)))
        for note in sorted_notes(result.incomplete):
            place: dict[str, Any] = {"path": path}
            message = note.message
            if note.row is not None and note.cell is None:
                place["range"] = {"start": {"line": note.row, "column": 1}}
            elif note.row is not None:
                message = f"cell {note.cell}:{note.row}: {message}"
            out.append({"code": {"value": NOTE_CODE}, "location": place, "message": message, "severity": "INFO"})
    return {"diagnostics": out, "severity": "WARNING", "source": SOURCE}


def emit(results: Sequence[FileResult], *, out: TextIO, cwd: Path) -> None:
    """Write the object and a final newline."""
    json.dump(result_object(results, cwd), out, indent=2, sort_keys=True, ensure_ascii=False)
    out.write("\n")
