"""`--output-format gitlab`: a GitLab Code Quality report (`artifacts: reports: codequality:`).

A JSON array of issues with the fields GitLab reads: `description`, `check_name`, `fingerprint`,
`severity` (`info`, `minor`, `major`, `critical`, `blocker`) and `location` (`path` relative to the
working directory, the checkout root in CI, and `lines.begin`/`lines.end`). The fingerprint hashes the
path, the code, the flagged line's text and its occurrence number, not the row: a finding keeps its
fingerprint when lines above it move, so merge requests show it as neither new nor fixed. A part of a
file the analysis did not follow to the end is an `info` issue (`analysis-incomplete`).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from gradguard.model import FileResult, Severity
from gradguard.report._common import (
    FILE_ERROR_CODE,
    NOTE_CODE,
    cell_source,
    display_path,
    sorted_diagnostics,
    sorted_errors,
    sorted_notes,
    sorted_results,
)

_SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor"}


def _line_text(source: str | None, row: int) -> str:
    if source is None:
        return ""
    lines = source.splitlines()
    return lines[row - 1].strip() if 1 <= row <= len(lines) else ""


def _fingerprint(seen: Counter[tuple[str, ...]], *parts: str) -> str:
    seen[parts] += 1
    text = "\0".join((*parts, str(seen[parts])))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _issue(path: str, check: str, description: str, severity: str, begin: int, end: int, fingerprint: str) -> dict[str, Any]:
    return {
        "check_name": check,
        "description": description,
        "fingerprint": fingerprint,
        "location": {"lines": {"begin": begin, "end": max(begin, end)}, "path": path},
        "severity": severity,
        "type": "issue",
    }


def issues(results: Sequence[FileResult], cwd: Path) -> list[dict[str, Any]]:
    """Every file error, finding and note as a Code Quality issue."""
    out: list[dict[str, Any]] = []
    seen: Counter[tuple[str, ...]] = Counter()
    for result in sorted_results(results, cwd):
        path = display_path(result.path, cwd)
        for error in sorted_errors(result.errors):
            row = error.row or 1
            fingerprint = _fingerprint(seen, path, FILE_ERROR_CODE, error.message)
            out.append(_issue(path, FILE_ERROR_CODE, error.message, "critical", row, row, fingerprint))
        for diagnostic in sorted_diagnostics(result.diagnostics):
            span = diagnostic.span
            text = _line_text(cell_source(result, diagnostic.cell), span.start.row)
            where = "" if diagnostic.cell is None else f"cell {diagnostic.cell}, line {span.start.row}: "
            fingerprint = _fingerprint(seen, path, diagnostic.code, str(diagnostic.cell), text)
            # GitLab has no notion of notebook cells: a cell's finding is placed on the file's line 1.
            begin, end = (span.start.row, span.end.row) if diagnostic.cell is None else (1, 1)
            description = f"{diagnostic.code}: {where}{diagnostic.message}"
            out.append(
                _issue(path, diagnostic.code, description, _SEVERITY[diagnostic.severity], begin, end, fingerprint)
            )
        for note in sorted_notes(result.incomplete):
            row = note.row if note.row is not None and note.cell is None else 1
            fingerprint = _fingerprint(seen, path, NOTE_CODE, note.message)
            out.append(_issue(path, NOTE_CODE, note.message, "info", row, row, fingerprint))
    return out


def emit(results: Sequence[FileResult], *, out: TextIO, cwd: Path) -> None:
    """Write the report (`[]` when nothing was found) and a final newline."""
    json.dump(issues(results, cwd), out, indent=2, sort_keys=True, ensure_ascii=False)
    out.write("\n")
