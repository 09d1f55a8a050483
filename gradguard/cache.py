"""The cache: `.gradguard_cache/` at the project root, one JSON file per result, plus an index by path.

An entry is keyed by the file's bytes, the rule selection that applies to it, its kind (script or
notebook), gradguard's version and a hash of gradguard's own code (its .py files and rule documents), so
an edited checkout never serves results of the code it replaced. Each entry carries a checksum of its
content: one garbled into other valid JSON (a flipped bit turning row 5 into 4) does not verify and is
rebuilt, as is one corrupt, truncated or from another version. An entry also records the files the
analysis read besides the linted one (its `dependencies`, with their content hashes) and is served only
while they are unchanged.

The index (`index.json`) maps a path, its (size, mtime_ns, ctime_ns, inode) and its settings to the key of
its entry (or to "skipped by the prefilter"), so a warm run neither reads, decodes nor prefilters a file
that did not change. Its first line holds the SHA-256 of the rest, checked before anything is read from
it: one hash of the bytes, rather than one canonical JSON dump per record, keeps a warm run cheap. A record is written only for a file whose mtime is older than `RACY_NS` when it was
looked at (git's "racily clean" rule: a later edit within the clock's granularity could otherwise keep
the same times), and is trusted only while each of its dependencies keeps its size and mtime. The
dependencies' (path, size, mtime) stamps are stored once, in a table the records point into by
position: the files of a package import the same modules (diffusers: 55,819 references to 990
stamps), so a warm run stats each stamp once and checks a record with one set operation.

Everything is written atomically (temporary file + `os.replace`), so two runs at once never leave a torn
file; the folder holds a `.gitignore` of `*`, like ruff's cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from functools import cache
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
    Note,
    Related,
    Severity,
    Span,
)

CACHE_DIR = ".gradguard_cache"
FORMAT = 5
INDEX = "index.json"
# The folders' walks of earlier runs (`WalkMemo`), so that a warm run need not walk them again.
WALKS = "walks.json"
# A file changed less than this long before it was looked at is never indexed by its times (see above).
RACY_NS = 2_000_000_000
# Leftover temporary files older than this are removed (a run killed between writing and renaming).
STALE_TEMP_S = 3600

# A dependency as recorded: [path, size, mtime_ns, sha256 of its content] (size -1 and digest "" when
# it did not exist: the result holds while it still does not).
Stamp = list[Any]


@cache
def code_version() -> str:
    """A hash of gradguard's installed code and rule documents, computed once per process (~2 ms)."""
    from gradguard.catalogue import catalogue_dir

    digest = hashlib.sha256(f"{__version__}\0{FORMAT}\0".encode())
    package = Path(__file__).resolve().parent
    folders = [(package, ".py"), (catalogue_dir(), ".md")]
    for folder, suffix in folders:
        for directory, subfolders, names in os.walk(folder):
            subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
            for name in sorted(names):
                if name.endswith(suffix):
                    file = os.path.join(directory, name)
                    digest.update(os.path.relpath(file, folder).encode("utf-8", "surrogateescape") + b"\0")
                    with contextlib.suppress(OSError), open(file, "rb") as handle:
                        digest.update(hashlib.sha256(handle.read()).digest())
    return digest.hexdigest()


def entry_key(data: bytes, fingerprint: str, notebook: bool) -> str:
    """The key of one file's entry: its bytes, its settings, its kind and gradguard's code."""
    digest = hashlib.sha256()
    digest.update(f"{code_version()}\0{int(notebook)}\0{fingerprint}\0".encode())
    digest.update(data)
    return digest.hexdigest()


def checksum(content: Any) -> str:
    """The checksum of JSON data (canonical form: sorted keys, no spaces)."""
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def signature(info: os.stat_result) -> list[int]:
    """What the index compares to decide that a file did not change."""
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]


def is_racy(info: os.stat_result, looked_ns: int) -> bool:
    """True when the file was modified too shortly before `looked_ns` for its mtime to prove anything.

    A later write sets mtime to a later tick of the clock, so an mtime older than `RACY_NS` cannot be
    repeated by one; a change that restores the mtime (`cp -p`, `touch -r`) still moves ctime.
    """
    return looked_ns - info.st_mtime_ns < RACY_NS


class Cache:
    """One cache folder; every method swallows I/O problems (a cache must never fail a run).

    The object lives for one run: it memoises the dependencies' hashes and holds the index's changes
    until `save`.
    """

    def __init__(self, root: Path) -> None:
        self.folder = root / CACHE_DIR
        self._digests: dict[str, str] = {}
        self._stats: dict[str, list[int] | None] = {}
        self._index: dict[str, Any] | None = None
        self._stamps: list[Any] = []
        self._changed_stamps: set[int] | None = None
        self._changed: dict[str, Any] = {}
        self._walks: dict[str, Any] | None = None
        self._walks_changed: dict[str, Any] = {}

    def _entry(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    # -- entries --------------------------------------------------------------------------------------

    def get(self, key: str, path: str) -> FileResult | None:
        """The cached result for `key` (with `path` as its file), or None when there is none that verifies."""
        try:
            with open(self._entry(key), "rb") as handle:
                payload = json.loads(handle.read())
            if payload.get("version") != __version__ or payload.get("format") != FORMAT:
                return None
            if payload.get("key") != key:
                return None
            result, stamps = payload["result"], payload["dependencies"]
            if payload.get("checksum") != checksum([key, result, stamps]):
                return None
            if not all(self._same_content(stamp) for stamp in stamps):
                return None
            return result_from_json(result, path, tuple(str(stamp[0]) for stamp in stamps))
        except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError):
            return None

    def put(self, key: str, result: FileResult) -> None:
        """Store a result (without its source text), with its dependencies' content hashes."""
        data = result_to_json(result)
        stamps = [self._stamp(os.path.abspath(dependency)) for dependency in result.dependencies]
        payload = {
            "version": __version__,
            "format": FORMAT,
            "key": key,
            "checksum": checksum([key, data, stamps]),
            "result": data,
            "dependencies": stamps,
        }
        entry = self._entry(key)
        try:
            self._ensure_folder(entry.parent)
            self._write(entry, payload)
        except OSError:
            return

    def _write(self, target: Path, payload: Any) -> None:
        self._write_bytes(target, json.dumps(payload, separators=(",", ":")).encode("utf-8"))

    def _write_bytes(self, target: Path, data: bytes) -> None:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def _digest(self, path: str) -> str:
        if path not in self._digests:
            try:
                with open(path, "rb") as handle:
                    self._digests[path] = hashlib.sha256(handle.read()).hexdigest()
            except OSError:
                self._digests[path] = ""
        return self._digests[path]

    def _stat(self, path: str) -> list[int] | None:
        if path not in self._stats:
            try:
                info = os.stat(path)
            except OSError:
                self._stats[path] = None
            else:
                self._stats[path] = [info.st_size, info.st_mtime_ns]
        return self._stats[path]

    def _stamp(self, path: str) -> Stamp:
        found = self._stat(path)
        size, mtime = found if found is not None else (-1, 0)
        return [path, size, mtime, self._digest(path)]

    def _same_content(self, stamp: Stamp) -> bool:
        path, _, _, digest = stamp
        return isinstance(path, str) and self._digest(path) == digest

    def _same_times(self, stamp: list[Any]) -> bool:
        path, size, mtime = stamp
        found = self._stat(path) if isinstance(path, str) else None
        return (found or [-1, 0]) == [size, mtime]

    # -- the index ------------------------------------------------------------------------------------

    def _read_index(self) -> tuple[dict[str, Any], list[Any]]:
        """The index's records and stamp table as on disk; empty when missing, foreign or corrupt."""
        data = self._read_json(INDEX)
        files, stamps = (data.get("files"), data.get("stamps")) if isinstance(data, dict) else (0, 0)
        if isinstance(files, dict) and isinstance(stamps, list):
            return files, stamps
        return {}, []

    def _load_index(self) -> dict[str, Any]:
        if self._index is None:
            self._index, self._stamps = self._read_index()
        return self._index

    def _changed_stamp_ids(self) -> set[int]:
        """The positions of the stamp table whose file no longer has the recorded size and mtime."""
        if self._changed_stamps is None:
            changed = set()
            for position, stamp in enumerate(self._stamps):
                try:
                    same = isinstance(stamp, list) and len(stamp) == 3 and self._same_times(stamp)
                except TypeError:
                    same = False
                if not same:
                    changed.add(position)
            self._changed_stamps = changed
        return self._changed_stamps

    def lookup(
        self, path: str, info: os.stat_result, fingerprint: str, notebook: bool
    ) -> dict[str, Any] | None:
        """The index record of an unchanged file: `{"key": ..., "skipped": ...}`, or None."""
        record = self._load_index().get(os.path.abspath(path))
        try:
            if not isinstance(record, dict):
                return None
            if record["stat"] != signature(info) or record["fingerprint"] != fingerprint:
                return None
            if record["notebook"] is not notebook:
                return None
            positions = record["dependencies"]
            if not isinstance(positions, list):
                return None
            if positions and not (0 <= min(positions) and max(positions) < len(self._stamps)):
                return None
            if not self._changed_stamp_ids().isdisjoint(positions):
                return None
            if not (isinstance(record["key"], str) or record["skipped"] is True):
                return None
            return record
        except (KeyError, TypeError, ValueError):
            return None

    def record(
        self,
        path: str,
        info: os.stat_result,
        looked_ns: int,
        fingerprint: str,
        notebook: bool,
        key: str | None,
        dependencies: tuple[str, ...] = (),
    ) -> None:
        """Index a file by its times (key None: the prefilter skipped it); not done for a racy file."""
        if is_racy(info, looked_ns):
            return
        dependencies = tuple(os.path.abspath(dependency) for dependency in dependencies)
        stamps = []
        for dependency in dependencies:
            found = self._stat(dependency)
            stamps.append([dependency, *(found if found is not None else (-1, 0))])
            with contextlib.suppress(OSError):
                if is_racy(os.stat(dependency), time.time_ns()):
                    return
        body = {
            "stat": signature(info),
            "fingerprint": fingerprint,
            "notebook": notebook,
            "key": key,
            "skipped": key is None,
            "dependencies": stamps,  # turned into positions of the stamp table by `save`
        }
        self._changed[os.path.abspath(path)] = body

    def save(self) -> None:
        """Write the index's changes (merged with what another run may have written meanwhile)."""
        self._save_walks()
        if not self._changed:
            return
        files, stamps = self._read_index()
        files = dict(files)
        stamps = list(stamps)
        positions = {}
        for position, stamp in enumerate(stamps):
            with contextlib.suppress(TypeError):
                positions.setdefault(tuple(stamp), position)
        for path, body in self._changed.items():
            ids = []
            for stamp in body["dependencies"]:
                position = positions.get(tuple(stamp))
                if position is None:
                    position = positions[tuple(stamp)] = len(stamps)
                    stamps.append(stamp)
                ids.append(position)
            files[path] = {**body, "dependencies": ids}
        self._changed = {}
        files, stamps = _without_unused_stamps(files, stamps)
        self._index, self._stamps, self._changed_stamps = None, [], None
        try:
            self._ensure_folder(None)
            self._write_checked(INDEX, {"stamps": stamps, "files": files})
            self._remove_stale_temps()
        except OSError:
            return

    # -- walks of folders -------------------------------------------------------------------------------

    def walk_memo(self, context: str) -> WalkMemo:
        """The memo of folder walks made under `context` (the working folder and the --config file)."""
        return WalkMemo(self, context)

    def _read_json(self, name: str) -> Any:
        """A file of the folder written by `_write_checked`, or None when missing, foreign or corrupt."""
        try:
            with open(self.folder / name, "rb") as handle:
                header, _, body = handle.read().partition(b"\n")
            meta = json.loads(header)
            if (
                isinstance(meta, dict)
                and meta.get("format") == FORMAT
                and meta.get("code") == code_version()
                and meta.get("checksum") == hashlib.sha256(body).hexdigest()
            ):
                return json.loads(body)
        except (OSError, ValueError, RecursionError):
            pass
        return None

    def _write_checked(self, name: str, data: Any) -> None:
        body = json.dumps(data, separators=(",", ":")).encode("utf-8")
        meta = {"format": FORMAT, "code": code_version(), "checksum": hashlib.sha256(body).hexdigest()}
        self._write_bytes(self.folder / name, json.dumps(meta).encode("ascii") + b"\n" + body)

    def _load_walks(self) -> dict[str, Any]:
        if self._walks is None:
            found = self._read_json(WALKS)
            self._walks = found if isinstance(found, dict) else {}
        return self._walks

    def _save_walks(self) -> None:
        if not self._walks_changed:
            return
        self._walks = None
        walks = {**self._load_walks(), **self._walks_changed}
        self._walks_changed = {}
        try:
            self._ensure_folder(None)
            self._write_checked(WALKS, walks)
        except OSError:
            return

    def _remove_stale_temps(self) -> None:
        """Temporary files a killed run left behind (in the folder and its entry folders)."""
        limit = time.time() - STALE_TEMP_S
        for leftover in [*self.folder.glob(".tmp-*"), *self.folder.glob("*/.tmp-*")]:
            with contextlib.suppress(OSError):
                if leftover.stat().st_mtime < limit:
                    leftover.unlink()

    def _ensure_folder(self, sub: Path | None) -> None:
        if not self.folder.is_dir():
            self.folder.mkdir(parents=True, exist_ok=True)
            ignore = self.folder / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# Automatically created by gradguard.\n*\n", encoding="utf-8")
            tag = self.folder / "CACHEDIR.TAG"
            if not tag.exists():
                tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n", encoding="utf-8")
        if sub is not None:
            sub.mkdir(exist_ok=True)


def _without_unused_stamps(files: dict[str, Any], stamps: list[Any]) -> tuple[dict[str, Any], list[Any]]:
    """The table without the stamps no record points to any more (a file edited, a record replaced),
    and the records' positions renumbered; unchanged when every stamp is still used."""
    used: set[int] = set()
    for record in files.values():
        with contextlib.suppress(TypeError, AttributeError, KeyError):
            used.update(record["dependencies"])
    if used == set(range(len(stamps))):
        return files, stamps
    kept = sorted(i for i in used if isinstance(i, int) and 0 <= i < len(stamps))
    renumbered = {old: new for new, old in enumerate(kept)}
    moved = {}
    for path, record in files.items():
        try:
            moved[path] = {**record, "dependencies": [renumbered[i] for i in record["dependencies"]]}
        except (TypeError, AttributeError, KeyError):
            continue  # a record that points outside the table is dropped: it is rebuilt next run
    return moved, [stamps[i] for i in kept]


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
        "incomplete": [[note.message, note.row, note.cell] for note in result.incomplete],
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
                    "edits": [[_span(e.span), e.content] + ([e.path] if e.path is not None else [])
                              for e in d.fix.edits],
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


def result_from_json(data: dict[str, Any], path: str, dependencies: tuple[str, ...] = ()) -> FileResult:
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
                    edits=tuple(Edit(_span_back(edit[0]), str(edit[1]), str(edit[2]) if len(edit) > 2 else None)
                                for edit in fix["edits"]),
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
    return FileResult(
        path,
        diagnostics=tuple(diagnostics),
        errors=errors,
        skipped=bool(data["skipped"]),
        dependencies=dependencies,
        incomplete=tuple(
            Note(str(message), _int_or_none(row), _int_or_none(cell)) for message, row, cell in data["incomplete"]
        ),
    )


class WalkMemo:
    """`discovery.WalkMemo` kept in a cache folder: a walk is recalled while every folder it listed, and
    every .gitignore and configuration file it read (or found absent), looks as it did. A walk is not kept
    when one of them changed too shortly before (the racy rule of the index)."""

    def __init__(self, cache: Cache, context: str) -> None:
        self.cache = cache
        self.context = context

    def _key(self, top: str) -> str:
        return hashlib.sha256(json.dumps([self.context, top, os.path.abspath(top)]).encode()).hexdigest()

    def recall(self, top: str) -> list[str] | None:
        """The files of the walk of `top`, when nothing it depends on changed since; else None."""
        from gradguard.discovery import stamp

        record = self.cache._load_walks().get(self._key(top))
        try:
            if not isinstance(record, dict) or not isinstance(record["depends"], dict):
                return None
            if any(stamp(path) != looked for path, looked in record["depends"].items()):
                return None
            files = record["files"]
            return files if isinstance(files, list) and all(isinstance(f, str) for f in files) else None
        except (KeyError, TypeError, OSError, ValueError):
            return None

    def remember(self, top: str, files: list[str], depends: dict[str, Any]) -> None:
        """Keep a walk of `top`; `depends` maps each folder and file it read to its `discovery.stamp`."""
        now = time.time_ns()
        if any(looked is not None and now - looked[1] < RACY_NS for looked in depends.values()):
            return
        self.cache._walks_changed[self._key(top)] = {"files": files, "depends": depends}
