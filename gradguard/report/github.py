"""`--output-format github`: GitHub Actions workflow commands, shown as annotations on the pull request.

    ::error file=train.py,line=42,col=9,endLine=42,endColumn=24,title=gradguard (GG001)::message

Paths are relative to the working directory (the checkout root in a workflow). A notebook finding has
no line in the `.ipynb` file itself, so it is annotated on the file, its cell and line leading the message.
A part of a file the analysis did not follow to the end is a `::notice` (`analysis-incomplete`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from gradguard.model import (
    Applicability,
    Diagnostic,
    FileError,
    FileResult,
    Note,
    Severity,
)
from gradguard.report._common import (
    FILE_ERROR_CODE,
    NOTE_CODE,
    display_path,
    position,
    sorted_diagnostics,
    sorted_errors,
    sorted_notes,
    sorted_results,
)


def escape_data(text: str) -> str:
    """Escape a command's message the way the Actions runner unescapes it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a property value (`file=`, `title=`), where `:` and `,` are separators too."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(level: str, properties: list[tuple[str, object]], message: str) -> str:
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties)
    return f"::{level} {props}::{escape_data(message)}"


def diagnostic_command(path: str, diagnostic: Diagnostic) -> str:
    """The workflow command annotating one finding."""
    span = diagnostic.span
    properties: list[tuple[str, object]] = [("file", path)]
    lines = [diagnostic.message]
    if diagnostic.cell is None:
        properties += [
            ("line", span.start.row),
            ("col", span.start.column),
            ("endLine", span.end.row),
            ("endColumn", span.end.column),
        ]
    else:
        lines[0] = f"{position(span.start.row, span.start.column, diagnostic.cell)}: {diagnostic.message}"
    properties.append(("title", f"gradguard ({diagnostic.code})"))
    cells = diagnostic.related_cells
    for index, related in enumerate(diagnostic.related):
        cell = cells[index] if index < len(cells) else diagnostic.cell
        where = position(related.span.start.row, related.span.start.column, cell)
        lines.append(f"  {where}: {related.message}")
    if diagnostic.fix is not None:
        how = "safe fix" if diagnostic.fix.applicability is Applicability.SAFE else "unsafe fix"
        lines.append(f"  help: {diagnostic.fix.message} ({how})")
    level = "error" if diagnostic.severity is Severity.ERROR else "warning"
    return _command(level, properties, "\n".join(lines))


def error_command(path: str, error: FileError) -> str:
    """The workflow command annotating a file that could not be linted."""
    properties: list[tuple[str, object]] = [("file", path)]
    if error.row is not None:
        properties += [("line", error.row), ("col", error.column or 1)]
    properties.append(("title", f"gradguard ({FILE_ERROR_CODE})"))
    return _command("error", properties, error.message)


def note_command(path: str, note: Note) -> str:
    """The workflow command telling that part of a file was not analysed to the end."""
    properties: list[tuple[str, object]] = [("file", path)]
    message = note.message
    if note.row is not None and note.cell is None:
        properties.append(("line", note.row))
    elif note.row is not None:
        message = f"cell {note.cell}, line {note.row}: {message}"
    properties.append(("title", f"gradguard ({NOTE_CODE})"))
    return _command("notice", properties, message)


def emit(results: Sequence[FileResult], *, out: TextIO, cwd: Path) -> None:
    """Write one workflow command per file error, finding and note."""
    for result in sorted_results(results, cwd):
        path = display_path(result.path, cwd)
        for error in sorted_errors(result.errors):
            out.write(error_command(path, error) + "\n")
        for diagnostic in sorted_diagnostics(result.diagnostics):
            out.write(diagnostic_command(path, diagnostic) + "\n")
        for note in sorted_notes(result.incomplete):
            out.write(note_command(path, note) + "\n")
