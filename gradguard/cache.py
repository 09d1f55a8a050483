"""The content-hash cache: `.gradguard_cache/` at the project root, one JSON file per entry.

An entry is keyed by the file's bytes, the rule selection that applies to it, its kind (script or
notebook) and gradguard's version. Entries are written atomically (temporary file + `os.replace`), so two
runs at once never leave a torn entry; an entry that is corrupt, truncated or from another version is
ignored (and rewritten). The folder holds a `.gitignore` of `*`, like ruff's cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from gradguard import __version__
from gradguard.model import (
    Applicability,
    Diagnostic,
    Edit,
    FileError,
    FileResult,
    Fix,
    Location,
    Related,
    Severity,
    Span,
)

CACHE_DIR = ".gradguard_cache"
FORMAT = 1


def entry_key(data: bytes, fingerprint: str, notebook: bool) -> str:
    """The key of one file's entry."""
    digest = hashlib.sha256()
    digest.update(f"{__version__}\0{FORMAT}\0{int(notebook)}\0{fingerprint}\0".encode())
    digest.update(data)
    return digest.hexdigest()


class Cache:
    """One cache folder; every method swallows I/O problems (a cache must never fail a run)."""

    def __init__(self, root: Path) -> None:
        self.folder = root / CACHE_DIR

    def _entry(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str, path: str) -> FileResult | None:
        """The cached result for `key` (with `path` as its file), or None."""
        try:
            with open(self._entry(key), "rb") as handle:
                payload = json.loads(handle.read())
            if payload.get("version") != __version__ or payload.get("format") != FORMAT:
                return None
            if payload.get("key") != key:
                return None
            return result_from_json(payload["result"], path)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return None

    def put(self, key: str, result: FileResult) -> None:
        """Store a result (without its source text)."""
        payload = {"version": __version__, "format": FORMAT, "key": key, "result": result_to_json(result)}
        entry = self._entry(key)
        try:
            self._ensure_folder(entry.parent)
            fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(payload, handle, separators=(",", ":"))
                os.replace(tmp, entry)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            return

    def _ensure_folder(self, sub: Path) -> None:
        if not self.folder.is_dir():
            self.folder.mkdir(parents=True, exist_ok=True)
            ignore = self.folder / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# Automatically created by gradguard.\n*\n", encoding="utf-8")
            tag = self.folder / "CACHEDIR.TAG"
            if not tag.exists():
                tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n", encoding="utf-8")
        sub.mkdir(exist_ok=True)


def _loc(location: Location) -> list[int]:
    return [location.row, location.column]


def _span(span: Span) -> list[list[int]]:
    return [_loc(span.start), _loc(span.end)]


def _span_back(value: Any) -> Span:
    (row, column), (end_row, end_column) = value
    return Span.of(int(row), int(column), int(end_row), int(end_column))


def result_to_json(result: FileResult) -> dict[str, Any]:
    """A result as JSON data (its source and cells are left out: they are read again when needed)."""
    return {
        "skipped": result.skipped,
        "errors": [[e.message, e.row, e.column] for e in result.errors],
        "diagnostics": [
            {
                "code": d.code,
                "message": d.message,
                "span": _span(d.span),
                "severity": d.severity.value,
                "cell": d.cell,
                "related": [[_span(r.span), r.message] for r in d.related],
                "related_cells": list(d.related_cells),
                "fix": None
                if d.fix is None
                else {
                    "message": d.fix.message,
                    "applicability": d.fix.applicability.value,
                    "edits": [[_span(e.span), e.content] for e in d.fix.edits],
                },
            }
            for d in result.diagnostics
        ],
    }


def _int_or_none(value: Any) -> int | None:
    """A row, column or cell read back: an integer or None (TypeError otherwise: the entry is corrupt)."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise TypeError(f"expected an integer or null, got {value!r}")


def result_from_json(data: dict[str, Any], path: str) -> FileResult:
    """The inverse of `result_to_json` (raises on malformed data)."""
    diagnostics = []
    for d in data["diagnostics"]:
        fix = d["fix"]
        diagnostics.append(
            Diagnostic(
                code=str(d["code"]),
                message=str(d["message"]),
                span=_span_back(d["span"]),
                severity=Severity(d["severity"]),
                fix=None
                if fix is None
                else Fix(
                    message=str(fix["message"]),
                    applicability=Applicability(fix["applicability"]),
                    edits=tuple(Edit(_span_back(span), str(content)) for span, content in fix["edits"]),
                ),
                related=tuple(Related(_span_back(span), str(message)) for span, message in d["related"]),
                cell=_int_or_none(d["cell"]),
                related_cells=tuple(_int_or_none(cell) for cell in d["related_cells"]),
            )
        )
    errors = tuple(
        FileError(path, str(message), _int_or_none(row), _int_or_none(column))
        for message, row, column in data["errors"]
    )
    return FileResult(path, diagnostics=tuple(diagnostics), errors=errors, skipped=bool(data["skipped"]))
