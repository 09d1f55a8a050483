"""Apply fixes: edits to text, rounds of apply-and-re-analyse, and atomic writes that keep the file's form.

A round applies every applicable fix whose edits do not overlap an edit already taken; the others wait
for the next round, which re-analyses the new text. Rounds stop when no fix applies (at most
`MAX_ROUNDS`). Writing goes through a temporary file in the same folder and `os.replace`, keeping the
permissions, the encoding, the BOM and the line endings, and never overwrites a file that changed on disk
since it was read.
"""

from __future__ import annotations

import bisect
import contextlib
import difflib
import hashlib
import os
import re
import stat
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from gradguard.engine import (
    InputError,
    Prepared,
    analyse,
    program_diagnostics,
    to_file_coordinates,
)
from gradguard.model import (
    Applicability,
    Diagnostic,
    Edit,
    FileError,
    FileResult,
    Fix,
    Location,
    Span,
)

if TYPE_CHECKING:
    from gradguard.config import Selection

MAX_ROUNDS = 10
_NEWLINE = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class OtherFile:
    """A project module that one file's fixes change (where the cause of its finding sits): its text
    as the analysis read it, the fixed text, and the diff. The run writes it once every file is done,
    so that two files fixing one module in parallel processes never race."""

    path: str
    before: str
    after: str
    diff: str


@dataclass(frozen=True)
class FixOutcome:
    """What fixing one file did: the remaining findings, how many were fixed, and the diff."""

    result: FileResult
    fixed: int = 0
    diff: str = ""
    fixed_codes: tuple[str, ...] = ()  # the code of each finding the fixes removed (`--show-fixes`)
    others: tuple[OtherFile, ...] = ()  # the other files its fixes change, written by the run


class EditConflict(Exception):
    """An edit lies outside the text or spans notebook cells: its fix is skipped."""


def digest(data: bytes) -> str:
    """The content hash used to notice a file that changed on disk."""
    return hashlib.sha256(data).hexdigest()


def line_starts(text: str) -> list[int]:
    """The offset where each row starts (rows end at `\\n`, `\\r\\n` or `\\r`, as Python reads them)."""
    starts = [0]
    starts.extend(match.end() for match in _NEWLINE.finditer(text))
    return starts


def to_offset(location: Location, starts: list[int], text: str) -> int:
    """A 1-based (row, column) to an offset in `text`; EditConflict when it lies outside."""
    if location.row == len(starts) + 1 and location.column == 1 and not text.endswith(("\n", "\r")):
        return len(text)  # just past a last line that has no newline (a notebook cell's last line)
    if not 1 <= location.row <= len(starts):
        raise EditConflict(f"row {location.row} is outside the text")
    start = starts[location.row - 1]
    end = starts[location.row] if location.row < len(starts) else len(text)
    offset = start + location.column - 1
    if not start <= offset <= end:
        raise EditConflict(f"column {location.column} is outside row {location.row}")
    return offset


def newline_of(text: str) -> str:
    """The file's line ending (its first one; `\\n` when it has none)."""
    match = _NEWLINE.search(text)
    return match.group() if match else "\n"


def apply_edits(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """Replace non-overlapping (start, end, content) offset ranges of `text`."""
    out = text
    for start, end, content in sorted(edits, key=lambda edit: (edit[0], edit[1]), reverse=True):
        out = out[:start] + content + out[end:]
    return out


def wanted(fix: Fix | None, unsafe: bool) -> bool:
    """Whether a fix applies: safe, or unsafe with `--unsafe-fixes`."""
    return fix is not None and (unsafe or fix.applicability is Applicability.SAFE)


def choose_fixes(diagnostics: Iterable[Diagnostic], unsafe: bool, other_files: bool = True,
                 fixed_apart: frozenset[str] = frozenset()) -> list[Fix]:
    """The fixes to try this round, in order of their findings: without those that edit other files
    unless `other_files`, nor those that edit a file of `fixed_apart` (fixed by its own job)."""
    return [
        d.fix
        for d in sorted(diagnostics, key=lambda d: d.span.start)
        if d.fix is not None and wanted(d.fix, unsafe) and (other_files or not d.fix.other_files)
        and not fixed_apart.intersection(d.fix.other_files)
    ]


def module_text(path: str) -> str | None:
    """The text of a project module as the analysis reads it (the overlay's, else the file's, decoded as
    the project loader decodes it): the text the coordinates of an edit there refer to."""
    from gradguard.analysis.project import overlay

    path = os.path.abspath(path)
    text = dict(overlay()).get(path)
    if text is not None:
        return text
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None


def _conflict(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
    """Two edits conflict when their ranges overlap, or when both insert at the same point."""
    return (a[0] < b[1] and b[0] < a[1]) or a[0] == a[1] == b[0] == b[1]


class _Text:
    """A text being edited in one round: takes a fix's edits unless they conflict with ones taken."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = line_starts(text)
        self.newline = newline_of(text)
        self.taken: list[tuple[int, int, str]] = []
        self.ordered: list[tuple[int, int, str]] = []  # `taken` by offset, to find conflicts fast

    def conflicts(self, edit: tuple[int, int, str]) -> bool:
        """Whether `edit` conflicts with an edit taken (those are pairwise disjoint: only the one
        starting before it and those starting inside it can overlap it)."""
        index = bisect.bisect_left(self.ordered, (edit[0], -1))
        for other in self.ordered[max(index - 1, 0):]:
            if other[0] > edit[1]:
                return False
            if _conflict(edit, other):
                return True
        return False

    def take(self, edit: tuple[int, int, str]) -> None:
        self.taken.append(edit)
        bisect.insort(self.ordered, edit)

    def offsets(self, edit: Edit) -> tuple[int, int, str]:
        """An edit as an offset range of this text."""
        start = to_offset(edit.span.start, self.starts, self.text)
        end = to_offset(edit.span.end, self.starts, self.text)
        if end < start:
            raise EditConflict("an edit ends before it starts")
        content = edit.content
        if self.newline != "\n":
            content = content.replace("\r\n", "\n").replace("\n", self.newline)
        return start, end, content

    def result(self) -> str:
        return apply_edits(self.text, self.taken)


def _take(planned: list[tuple[_Text, tuple[int, int, str]]]) -> bool:
    """Take all of one fix's edits, or none when any conflicts with another."""
    for index, (target, edit) in enumerate(planned):
        if target.conflicts(edit):
            return False
        if any(t is target and _conflict(edit, other) for t, other in planned[:index]):
            return False
    for target, edit in planned:
        target.take(edit)
    return True


class _Others:
    """The other files one round edits, each a `_Text` made on first use from its text so far."""

    def __init__(self, texts: dict[str, str] | None) -> None:
        self.texts = texts  # None: edits of other files are not applied (a buffer piped through stdin)
        self.targets: dict[str, _Text] = {}

    def target(self, path: str) -> _Text:
        found = self.targets.get(path)
        if found is None:
            if self.texts is None:
                raise EditConflict("an edit of another file")
            text = self.texts.get(path)
            if text is None:
                text = module_text(path)
            if text is None:
                raise EditConflict(f"{path} cannot be read")
            found = self.targets[path] = _Text(text)
        return found

    def results(self) -> dict[str, str]:
        """The texts of the other files edited so far, this round's edits applied."""
        done = dict(self.texts or {})
        done.update({path: target.result() for path, target in self.targets.items() if target.taken})
        return done


def fix_text_round(text: str, fixes: list[Fix], others: dict[str, str] | None = None) -> tuple[str, int]:
    """Apply the fixes of one round to a plain file's text; returns (new text, fixes applied). A fix
    that edits another file applies only with `others`, the texts of the other files edited so far,
    which receives their new texts."""
    target = _Text(text)
    other = _Others(others)
    applied = 0
    for fix in fixes:
        try:
            planned = []
            for edit in fix.edits:
                text_of = target if edit.path is None else other.target(edit.path)
                planned.append((text_of, text_of.offsets(edit)))
        except EditConflict:
            continue
        applied += _take(planned)
    if others is not None:
        others.update(other.results())
    return target.result(), applied


def fix_notebook_round(prepared: Prepared, fixes: list[Fix],
                       others: dict[str, str] | None = None) -> tuple[dict[int, str], int]:
    """Apply the fixes of one round to a notebook's cells; returns (new cell sources, fixes applied).
    Edits of other files as in `fix_text_round`."""
    notebook = prepared.notebook
    assert notebook is not None
    sources = dict(notebook.cells)
    targets: dict[int, _Text] = {}
    other = _Others(others)
    applied = 0
    for fix in fixes:
        try:
            planned = []
            for edit in fix.edits:
                if edit.path is not None:
                    elsewhere = other.target(edit.path)
                    planned.append((elsewhere, elsewhere.offsets(edit)))
                    continue
                place = notebook.locate_span(edit.span.start.row, edit.span.end.row, edit.span.end.column)
                if place is None or place[0] not in sources:
                    raise EditConflict("an edit spans two cells")
                cell, row, end_row = place
                target = targets.setdefault(cell, _Text(sources[cell]))
                cell_edit = Edit(
                    Span.of(row, edit.span.start.column, end_row, edit.span.end.column), edit.content
                )
                planned.append((target, target.offsets(cell_edit)))
        except EditConflict:
            continue
        applied += _take(planned)
    if others is not None:
        others.update(other.results())
    return {cell: target.result() for cell, target in targets.items() if target.taken}, applied


def fix_prepared(
    prepared: Prepared, selection: Selection, *, unsafe: bool, fixed_codes: list[str] | None = None,
    others: dict[str, str] | None = None, fixed_apart: frozenset[str] = frozenset(),
) -> tuple[Prepared, tuple[Diagnostic, ...], int, str | None]:
    """Apply fixes round after round (InputError when the file cannot be analysed at all).

    Returns the fixed file, its remaining findings (program coordinates), how many fixes were applied,
    and a note when a round produced code that no longer parses (that round is undone). `fixed_codes`,
    when given, receives the code of each finding that is gone after the fixes. Fixes that edit other
    files (project modules the file imports) apply only with `others`, which receives the new texts of
    those files (absolute path -> text); the file is re-analysed with them each round. Files of
    `fixed_apart` are left alone (the run fixes them as files of their own).
    """
    from gradguard.fixcheck import fix_session

    initial = program_diagnostics(prepared, selection)
    with fix_session():
        fixed, remaining, total, note = _fix_rounds(prepared, initial, selection, unsafe, others, fixed_apart)
    if fixed_codes is not None and total:
        gone = Counter(d.code for d in initial) - Counter(d.code for d in remaining)
        fixed_codes.extend(sorted(gone.elements()))
    return fixed, remaining, total, note


def _fix_rounds(
    prepared: Prepared, diagnostics: tuple[Diagnostic, ...], selection: Selection, unsafe: bool,
    others: dict[str, str] | None, fixed_apart: frozenset[str],
) -> tuple[Prepared, tuple[Diagnostic, ...], int, str | None]:
    from gradguard.analysis.project import overlaid
    from gradguard.notebook import dump_notebook, parse_notebook, replace_cell_sources

    def apply(current: Prepared, texts: dict[str, str] | None,
              fixes: list[Fix]) -> tuple[Prepared, dict[str, str] | None, int]:
        texts = dict(texts) if texts is not None else None
        if current.notebook is None:
            text, applied = fix_text_round(current.source, fixes, texts)
            return Prepared(current.path, text, current.encoding), texts, applied
        sources, applied = fix_notebook_round(current, fixes, texts)
        document = replace_cell_sources(current.notebook.document, sources)
        text = dump_notebook(document, current.source)
        return Prepared(current.path, text, current.encoding, parse_notebook(text)), texts, applied

    def analysed(candidate: Prepared, texts: dict[str, str] | None) -> tuple[Diagnostic, ...]:
        for path, text in (texts or {}).items():
            problem = _parse_problem(text)
            if problem is not None:
                raise InputError(FileError(path, problem))
        with overlaid(texts or {}):
            return program_diagnostics(candidate, selection)

    current, current_others = prepared, (dict(others) if others is not None else None)
    total = 0
    for _ in range(MAX_ROUNDS):
        fixes = choose_fixes(diagnostics, unsafe, other_files=others is not None, fixed_apart=fixed_apart)
        if not fixes:
            break
        candidate, candidate_others, applied = apply(current, current_others, fixes)
        if applied == 0 or (candidate.source == current.source and candidate_others == current_others):
            break
        try:
            diagnostics_after = analysed(candidate, candidate_others)
        except InputError as exc:
            if len(fixes) == 1:
                note = (
                    f"a fix produced code that does not parse ({exc.error.message}); "
                    "it was undone, please report it"
                )
                return _done(current, diagnostics, total, note, current_others, others)
            # Fixes that are fine one by one can clash together (two removals emptying one
            # block): take the first alone this round; the others are found again next round.
            candidate, candidate_others, applied = apply(current, current_others, fixes[:1])
            try:
                diagnostics_after = analysed(candidate, candidate_others)
            except InputError as single:
                note = (
                    f"a fix produced code that does not parse ({single.error.message}); "
                    "it was undone, please report it"
                )
                return _done(current, diagnostics, total, note, current_others, others)
        current, current_others, diagnostics = candidate, candidate_others, diagnostics_after
        total += applied
    return _done(current, diagnostics, total, None, current_others, others)


def _done(current: Prepared, diagnostics: tuple[Diagnostic, ...], total: int, note: str | None,
          texts: dict[str, str] | None,
          others: dict[str, str] | None) -> tuple[Prepared, tuple[Diagnostic, ...], int, str | None]:
    if others is not None and texts is not None:
        others.clear()
        others.update(texts)
    return current, diagnostics, total, note


def _parse_problem(text: str) -> str | None:
    """Why a fixed project module does not parse (the analysis would silently skip it), or None."""
    import libcst as cst

    try:
        cst.parse_module(text)
    except (cst.ParserSyntaxError, RecursionError, ValueError) as exc:
        return f"the fixed code does not parse ({getattr(exc, 'message', exc)})"
    return None


def unified_diff(before: Prepared, after: Prepared) -> str:
    """The fixes as a unified diff (per cell for a notebook)."""
    if before.notebook is None or after.notebook is None:
        return "".join(
            difflib.unified_diff(
                before.source.splitlines(keepends=True),
                after.source.splitlines(keepends=True),
                fromfile=before.path,
                tofile=before.path,
            )
        )
    old_cells = dict(before.notebook.cells)
    parts = []
    for cell, source in after.notebook.cells:
        old = old_cells.get(cell, "")
        if old != source:
            label = f"{before.path}:cell {cell}"
            old_lines = [
                line if line.endswith("\n") else line + "\n" for line in old.splitlines(keepends=True)
            ]
            new_lines = [
                line if line.endswith("\n") else line + "\n" for line in source.splitlines(keepends=True)
            ]
            parts.append("".join(difflib.unified_diff(old_lines, new_lines, fromfile=label, tofile=label)))
    return "".join(parts)


def encode(prepared: Prepared) -> bytes:
    """The bytes to write: the original codec (a BOM kept when there was one)."""
    return prepared.source.encode(prepared.encoding)


def write_atomic(path: str, data: bytes, original_digest: str) -> None:
    """Replace the file's content atomically, keeping its mode; InputError when it changed meanwhile."""
    target = os.path.realpath(path)
    try:
        with open(target, "rb") as handle:
            current = handle.read()
        info = os.stat(target)
    except OSError as exc:
        raise InputError(FileError(path, f"not fixed: cannot read it again: {exc.strerror or exc}")) from None
    if digest(current) != original_digest:
        raise InputError(FileError(path, "not fixed: the file changed on disk while gradguard was fixing it"))
    # Replacing the file would succeed in a writable folder; a read-only file means "do not edit" (a
    # Perforce checkout, a vendored copy), as it does to ruff and black.
    if not os.access(target, os.W_OK):
        raise InputError(FileError(path, "not fixed: the file is read-only"))
    directory = os.path.dirname(target) or "."
    try:
        remove_leftover_temps(directory, os.path.basename(target))
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=temp_prefix(target), suffix=TEMP_SUFFIX)
    except OSError as exc:
        raise InputError(
            FileError(path, f"not fixed: cannot write in its folder: {exc.strerror or exc}")
        ) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, stat.S_IMODE(info.st_mode))
        with contextlib.suppress(OSError):  # not allowed for other users' files; the mode matters most
            os.chown(tmp, info.st_uid, info.st_gid)
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise InputError(FileError(path, f"not fixed: cannot write: {exc.strerror or exc}")) from None
    except BaseException:  # SIGTERM, Ctrl-C: the original is intact, leave no temporary file either
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


TEMP_SUFFIX = ".gradguard"
# A temporary file older than this is a leftover even if a process with the id in its name is running.
LEFTOVER_AGE_S = 3600


def temp_prefix(target: str) -> str:
    """`.NAME.py.<pid>.`: the temporary file beside `target` names the process that writes it."""
    return f".{os.path.basename(target)}.{os.getpid()}."


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process
    return True


def remove_leftover_temps(directory: str, name: str | None = None) -> list[str]:
    """Remove the temporary files a killed `--fix` left in `directory` (for the file `name`, or all).

    One is a leftover when the process named in it is gone, or it is older than `LEFTOVER_AGE_S`
    (a name from before the pid was in it, or a reused pid). Returns the paths removed.
    """
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    removed = []
    for candidate in names:
        if not (candidate.startswith(".") and candidate.endswith(TEMP_SUFFIX)):
            continue
        if name is not None and not candidate.startswith(f".{name}."):
            continue
        path = os.path.join(directory, candidate)
        middle = candidate[: -len(TEMP_SUFFIX)].rsplit(".", 2)
        pid = int(middle[-2]) if len(middle) == 3 and middle[-2].isdigit() else None
        try:
            info = os.lstat(path)
            if not stat.S_ISREG(info.st_mode):
                continue
            if pid is not None and _alive(pid) and time.time() - info.st_mtime < LEFTOVER_AGE_S:
                continue
            if pid is None and time.time() - info.st_mtime < LEFTOVER_AGE_S:
                continue
            os.unlink(path)
            removed.append(path)
        except OSError:
            continue
    return removed


def fix_file(
    prepared: Prepared,
    selection: Selection,
    original_digest: str,
    *,
    unsafe: bool,
    write: bool,
    fixed_apart: frozenset[str] = frozenset(),
) -> FixOutcome:
    """Fix one file: apply its fixes, then write it (or, with `write=False`, only produce the diff).

    The result holds the findings that remain after the fixes, in the fixed file's coordinates.
    """
    try:
        codes: list[str] = []
        texts: dict[str, str] = {}
        fixed, remaining, count, note = fix_prepared(prepared, selection, unsafe=unsafe, fixed_codes=codes,
                                                     others=texts, fixed_apart=fixed_apart)
        diff = unified_diff(prepared, fixed) if count else ""
        others = other_files(prepared.path, texts) if count else ()
        if count and write:
            try:
                data = encode(fixed)
            except UnicodeEncodeError:
                message = f"not fixed: the fixed code cannot be encoded as {prepared.encoding}"
                raise InputError(FileError(prepared.path, message)) from None
            write_atomic(prepared.path, data, original_digest)
    except InputError as exc:
        if exc.cell is not None:
            # A notebook cell that does not parse: fix nothing, report it and the other cells' findings.
            return FixOutcome(analyse(prepared, selection))
        return FixOutcome(FileResult(prepared.path, errors=(exc.error,), source=prepared.program))
    result = FileResult(
        prepared.path,
        diagnostics=to_file_coordinates(fixed, remaining),
        errors=(FileError(prepared.path, note),) if note else (),
        source=fixed.program,
        cells=fixed.notebook.cells if fixed.notebook is not None else (),
    )
    return FixOutcome(result, count, diff, tuple(codes), others)


def other_files(path: str, texts: dict[str, str]) -> tuple[OtherFile, ...]:
    """The other files a file's fixes changed, with their diffs labelled relative to its folder's
    project as the user names them (the path as given for the fixed file, the module's beside it)."""
    found = []
    base = os.path.dirname(os.path.abspath(path))
    shown_base = os.path.dirname(path)
    for other, after in sorted(texts.items()):
        before = module_text(other)
        if before is None or before == after:
            continue
        label = os.path.normpath(os.path.join(shown_base, os.path.relpath(other, base)))
        diff = "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                            fromfile=label, tofile=label))
        found.append(OtherFile(other, before, after, diff))
    return tuple(found)


def write_others(outcomes: list[FixOutcome]) -> list[FixOutcome]:
    """Write the other files the fixes of a run changed, each once, after every file is done.

    Two files whose fixes change one module the same way write it once. When they change it in
    different ways, or the module changed on disk meanwhile (its own fixes were written), the later
    one is not written and its file says so: a second `--fix` takes it from there."""
    written: dict[str, str] = {}
    done: list[FixOutcome] = []
    for outcome in outcomes:
        problems: list[FileError] = []
        kept: list[OtherFile] = []  # those written (or already holding the fixed text)
        for other in outcome.others:
            if written.get(other.path) == other.after:
                kept.append(other)
                continue
            label = other.diff.splitlines()[0][4:] if other.diff else other.path
            if other.path in written:
                problems.append(FileError(outcome.result.path, f"{label} not fixed: another file's fixes changed "
                                          "it too; run --fix again"))
                continue
            try:
                made = _other_bytes(other)
                if made is not None:
                    write_atomic(other.path, *made)
            except InputError as exc:
                problems.append(FileError(outcome.result.path, f"{label}: {exc.error.message}"))
                continue
            written[other.path] = other.after
            kept.append(other)
        result = outcome.result
        if problems:
            result = replace(result, errors=result.errors + tuple(problems))
        done.append(FixOutcome(result, outcome.fixed, outcome.diff, outcome.fixed_codes, tuple(kept)))
    return done


def _other_bytes(other: OtherFile) -> tuple[bytes, str] | None:
    """The fixed text of another file in the file's own codec (a BOM kept), and the digest of the bytes
    it replaces, which must still be those the fixes were made on (`write_atomic` checks it again);
    None when the file already holds the fixed text."""
    from gradguard.engine import decode

    try:
        with open(other.path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise InputError(FileError(other.path, f"not fixed: cannot read it again: {exc.strerror or exc}")) from None
    text, encoding = decode(data, other.path)
    if text.lstrip("\ufeff") == other.after:
        return None
    if text.lstrip("\ufeff") != other.before:
        raise InputError(FileError(other.path, "not fixed: the file changed on disk while gradguard was fixing it"))
    try:
        return other.after.encode(encoding), digest(data)
    except UnicodeEncodeError:
        raise InputError(FileError(other.path, f"not fixed: the fixed code cannot be encoded as {encoding}")) from None
