"""`--output-format pylint`: `path:row: [CODE] message`, the line shape editors and pylint tooling parse.

ruff's `pylint` format, with the message after the code. A notebook finding names its cell as
`cell N:row`; a file that could not be linted is a `[file-error]` line, a part the analysis did not
follow to the end an `[analysis-incomplete]` line.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from gradguard.model import FileResult
from gradguard.report._common import (
    FILE_ERROR_CODE,
    NOTE_CODE,
    display_path,
    note_where,
    sorted_diagnostics,
    sorted_errors,
    sorted_notes,
    sorted_results,
)


def emit(results: Sequence[FileResult], *, out: TextIO, cwd: Path) -> None:
    """Write one line per file error, finding and note."""
    for result in sorted_results(results, cwd):
        path = display_path(result.path, cwd)
        for error in sorted_errors(result.errors):
            out.write(f"{path}:{error.row or 1}: [{FILE_ERROR_CODE}] {error.message}\n")
        for diagnostic in sorted_diagnostics(result.diagnostics):
            row = diagnostic.span.start.row
            where = f"cell {diagnostic.cell}:{row}" if diagnostic.cell is not None else str(row)
            out.write(f"{path}:{where}: [{diagnostic.code}] {diagnostic.message}\n")
        for note in sorted_notes(result.incomplete):
            out.write(f"{path}:{note_where(note) or 1}: [{NOTE_CODE}] {note.message}\n")
