"""`--output-format sarif`: SARIF 2.1.0, for GitHub code scanning (`github/codeql-action/upload-sarif`).

One run whose driver lists every rule of the catalogue (with its document as help), results with the
finding's place, its related places (graph freed here, carrier assigned here) and its fix. Paths inside
the working directory are relative to `%SRCROOT%` (the working directory), others are absolute `file:`
URIs, and the invocation's `workingDirectory` tells GitHub where the checkout is. A notebook finding
points at line 1 of the `.ipynb` file (its rows count within a cell, not within the file's JSON, and
GitHub needs a line); the cell, row and column lead the message and sit in the location's properties.
Files that could not be linted are tool execution notifications, and make `executionSuccessful` false;
parts of a file the analysis did not follow to the end are notifications of level `note`
(`analysis-incomplete`), which leave it true.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote, urlsplit

import gradguard
from gradguard import catalogue
from gradguard.model import Diagnostic, Edit, FileError, FileResult, Note, Severity, Span
from gradguard.report._common import (
    FILE_ERROR_CODE,
    NOTE_CODE,
    absolute_path,
    display_body,
    position,
    rule_doc,
    sorted_diagnostics,
    sorted_errors,
    sorted_notes,
    sorted_results,
)

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning"}


def _information_uri() -> str:
    parts = urlsplit(catalogue.DOCS_URL)
    return f"{parts.scheme}://{parts.netloc}"


def rule_descriptor(doc: catalogue.RuleDoc) -> dict[str, Any]:
    """A catalogue document as a SARIF `reportingDescriptor`."""
    level = _LEVELS[doc.severity]
    body = display_body(doc)
    return {
        "id": doc.code,
        "name": doc.name,
        "shortDescription": {"text": doc.summary},
        "fullDescription": {"text": f"{doc.summary} Explains the runtime error: {doc.torch_error}"
                            if doc.torch_error else doc.summary},
        "help": {"text": body, "markdown": body},
        "helpUri": doc.url,
        "defaultConfiguration": {"level": level},
        "properties": {
            "tags": ["pytorch", "autograd", "correctness"],
            "problem.severity": level,
            "fixApplicability": doc.fix_applicability.value,
        },
    }


def _unknown_descriptor(code: str) -> dict[str, Any]:
    url = catalogue.DOCS_URL.format(code=code)
    return {
        "id": code,
        "shortDescription": {"text": code},
        "fullDescription": {"text": code},
        "help": {"text": url},
        "helpUri": url,
    }


def _artifact(path: str, cwd: Path) -> dict[str, str]:
    absolute = Path(absolute_path(path, cwd))
    try:
        relative = absolute.relative_to(os.path.abspath(cwd))
    except ValueError:
        return {"uri": absolute.as_uri()}
    # os.fsencode: a name that is not UTF-8 gets its own bytes percent-encoded, as `as_uri` does.
    return {"uri": quote(os.fsencode(relative.as_posix())), "uriBaseId": SRCROOT}


def _region(span: Span) -> dict[str, int]:
    return {
        "startLine": span.start.row,
        "startColumn": span.start.column,
        "endLine": span.end.row,
        "endColumn": span.end.column,
    }


def _physical(artifact: dict[str, str], span: Span, cell: int | None) -> dict[str, Any]:
    if cell is None:
        return {"physicalLocation": {"artifactLocation": artifact, "region": _region(span)}}
    return {
        "physicalLocation": {"artifactLocation": artifact, "region": {"startLine": 1}},
        "properties": {"cell": cell, "row": span.start.row, "column": span.start.column},
    }


def result_object(diagnostic: Diagnostic, artifact: dict[str, str], rule_index: int,
                  cwd: Path | None = None) -> dict[str, Any]:
    """One finding as a SARIF `result`."""
    span = diagnostic.span
    message = diagnostic.message
    if diagnostic.cell is not None:
        message = f"{position(span.start.row, span.start.column, diagnostic.cell)}: {message}"
    result: dict[str, Any] = {
        "ruleId": diagnostic.code,
        "ruleIndex": rule_index,
        "level": _LEVELS[diagnostic.severity],
        "message": {"text": message},
        "locations": [_physical(artifact, span, diagnostic.cell)],
    }
    cells = diagnostic.related_cells
    related = []
    for index, item in enumerate(diagnostic.related):
        cell = cells[index] if index < len(cells) else diagnostic.cell
        location = _physical(artifact, item.span, cell)
        related.append({"id": index, **location, "message": {"text": item.message}})
    if related:
        result["relatedLocations"] = related
    fix = diagnostic.fix
    if fix is not None and fix.edits and diagnostic.cell is None:
        # One change per file: a fix may edit the project module where the cause sits, too.
        files: dict[str | None, list[Edit]] = {}
        for edit in fix.edits:
            files.setdefault(edit.path, []).append(edit)
        result["fixes"] = [
            {
                "description": {"text": f"{fix.message} ({fix.applicability.value} fix)"},
                "artifactChanges": [
                    {
                        "artifactLocation": artifact if path is None else _artifact(path, cwd or Path.cwd()),
                        "replacements": [
                            {"deletedRegion": _region(edit.span), "insertedContent": {"text": edit.content}}
                            for edit in edits
                        ],
                    }
                    for path, edits in files.items()
                ],
            }
        ]
    return result


def _notification(error: FileError, artifact: dict[str, str]) -> dict[str, Any]:
    location: dict[str, Any] = {"artifactLocation": artifact}
    if error.row is not None:
        location["region"] = {"startLine": error.row, "startColumn": error.column or 1}
    return {
        "level": "error",
        "message": {"text": error.message},
        "descriptor": {"id": FILE_ERROR_CODE},
        "locations": [{"physicalLocation": location}],
    }


def _note_notification(note: Note, artifact: dict[str, str]) -> dict[str, Any]:
    location: dict[str, Any] = {"artifactLocation": artifact}
    physical: dict[str, Any] = {"physicalLocation": location}
    if note.row is not None:
        location["region"] = {"startLine": note.row if note.cell is None else 1}
        if note.cell is not None:
            physical["properties"] = {"cell": note.cell, "row": note.row}
    return {
        "level": "note",
        "message": {"text": note.message},
        "descriptor": {"id": NOTE_CODE},
        "locations": [physical],
    }


def log(results: Sequence[FileResult], cwd: Path) -> dict[str, Any]:
    """The SARIF log of a run, as a JSON-ready dict."""
    docs = list(catalogue.load().values())
    rules = [rule_descriptor(doc) for doc in docs]
    index = {doc.code: position for position, doc in enumerate(docs)}
    sarif_results: list[dict[str, Any]] = []
    notifications: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for result in sorted_results(results, cwd):
        artifact = _artifact(result.path, cwd)
        notifications.extend(_notification(error, artifact) for error in sorted_errors(result.errors))
        for diagnostic in sorted_diagnostics(result.diagnostics):
            if diagnostic.code not in index:
                index[diagnostic.code] = len(rules)
                doc = rule_doc(diagnostic.code)
                rules.append(rule_descriptor(doc) if doc else _unknown_descriptor(diagnostic.code))
            sarif_results.append(result_object(diagnostic, artifact, index[diagnostic.code], cwd))
        notes.extend(_note_notification(note, artifact) for note in sorted_notes(result.incomplete))
    root = Path(os.path.abspath(cwd)).as_uri().rstrip("/") + "/"
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "gradguard",
                        "version": gradguard.__version__,
                        "informationUri": _information_uri(),
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": root}},
                "columnKind": "unicodeCodePoints",
                "invocations": [
                    {
                        "executionSuccessful": not notifications,
                        "toolExecutionNotifications": notifications + notes,
                        "workingDirectory": {"uri": root},
                    }
                ],
                "results": sarif_results,
            }
        ],
    }


def emit(results: Sequence[FileResult], *, out: TextIO, cwd: Path) -> None:
    """Write the SARIF log, indented, with a final newline."""
    json.dump(log(results, cwd), out, indent=2, ensure_ascii=False)
    out.write("\n")
