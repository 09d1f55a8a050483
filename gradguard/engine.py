"""Lint one file: bytes to text, the cheap prefilter, the analysis, `# noqa`, settings, notebook mapping.

Pure: no printing, no writing, no global state. Every problem with the input becomes a `FileError` in the
`FileResult`; nothing the user's file contains can raise out of here.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
import warnings
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from gradguard.discovery import describe_os_error, is_notebook
from gradguard.model import (
    Diagnostic,
    Edit,
    FileError,
    FileResult,
    Fix,
    Location,
    Note,
    Related,
    Span,
)
from gradguard.noqa import LINE_NOQA, file_exemption, line_suppresses, split_codes
from gradguard.notebook import split_lines

if TYPE_CHECKING:
    from gradguard.analysis import Analysis
    from gradguard.analysis.api.facts import Fact
    from gradguard.config import Selection, Settings
    from gradguard.notebook import Notebook

_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_BLANK_OR_COMMENT = re.compile(rb"^[ \t\f]*(?:[#\r\n]|$)")
# libcst takes about 600 bytes of memory and 15 ms per kilobyte of code: past this, a file (generated, as a
# rule) would cost gigabytes and minutes; it is reported instead.
MAX_ANALYSED_CHARS = 2_000_000
# The rule that reports `# noqa: CODE` directives no finding needs.
UNUSED_NOQA = "GG100"


@dataclass(frozen=True)
class Prepared:
    """A file ready for analysis: its decoded text, and for a notebook the program of its cells."""

    path: str
    source: str  # the decoded file (a notebook's JSON text)
    encoding: str  # the codec that decoded it ("utf-8-sig" when it had a BOM)
    notebook: Notebook | None = None
    # When `source` is an excerpt of the file (the language server's focused check), the file's row of
    # each of its rows: findings are mapped back, and messages name the file's rows.
    rows: tuple[int, ...] | None = None

    @property
    def program(self) -> str:
        """The Python text the analysis sees."""
        return self.notebook.program if self.notebook is not None else self.source


class InputError(Exception):
    """A file cannot be linted; carries the one-line `FileError`."""

    def __init__(self, error: FileError, cell: int | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.cell = cell  # the notebook cell that does not parse


def read_bytes(path: str) -> bytes:
    """A regular file's bytes; InputError for a missing, special or unreadable file."""
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(FileError(path, f"not a regular file ({_kind(mode)}), not linted"))
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise InputError(FileError(path, f"cannot read: {describe_os_error(exc)}")) from None


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def decode(data: bytes, path: str) -> tuple[str, str]:
    """Decode Python source as Python does (UTF-8 BOM, PEP 263 cookie); returns (text, codec).

    A file CPython refuses (`SyntaxError: encoding problem`) is refused with a one-line InputError.
    """
    # What Windows PowerShell's `>` and Notepad's "Unicode" write: text, but in a form Python cannot run.
    for name, boms in (
        ("UTF-32", (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)),
        ("UTF-16", (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)),
    ):
        if data.startswith(boms):
            raise InputError(
                FileError(path, f"encoded as {name}, which Python cannot run (save it as UTF-8)")
            )
    if b"\0" in data:
        raise InputError(FileError(path, "binary file (it contains NUL bytes), not Python source"))
    bom = data.startswith(codecs.BOM_UTF8)
    encoding = "utf-8-sig" if bom else "utf-8"
    cookie = find_cookie(data[len(codecs.BOM_UTF8) :] if bom else data)
    cookie_row = 0
    if cookie is not None:
        declared, cookie_row = cookie
        encoding = _cookie_codec(declared, bom, path, cookie_row)
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        row = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        if cookie is not None and not bom:
            message = f"cannot decode as {encoding} (its coding cookie): {exc.reason}"
        else:
            message = "not UTF-8 and no coding cookie (add `# -*- coding: <encoding> -*-` or save as UTF-8)"
        raise InputError(FileError(path, message, row, column)) from None
    except (UnicodeError, ValueError, TypeError) as exc:  # a codec that fails in its own way
        message = f"encoding problem: {encoding} cannot decode this file ({exc})"
        raise InputError(FileError(path, message, cookie_row or None, 1)) from None
    if cookie is not None and not bom and not _keeps_cookie(data, text, cookie_row):
        # CPython reads the cookie line as ASCII and decodes the rest: a codec that does not reproduce the
        # ASCII of the cookie (UTF-16, punycode, ...) is one it refuses.
        raise InputError(FileError(path, f"encoding problem: {cookie[0]}", cookie_row, 1))
    return text, encoding


def find_cookie(data: bytes) -> tuple[str, int] | None:
    """The PEP 263 coding cookie in the first two lines (BOM removed): (declared name, 1-based row)."""
    for index, line in enumerate(data.split(b"\n", 2)[:2]):
        match = _COOKIE.match(line)
        if match:
            return match.group(1).decode("ascii"), index + 1
        if not _BLANK_OR_COMMENT.match(line):
            return None
    return None


def _normal_name(declared: str) -> str:
    """CPython's tokenizer's `get_normal_name`: the spellings it takes for utf-8 and latin-1."""
    name = declared[:12].replace("_", "-").lower()
    if name == "utf-8" or name.startswith("utf-8-"):
        return "utf-8"
    if name in ("latin-1", "iso-8859-1", "iso-latin-1") or name.startswith(
        ("latin-1-", "iso-8859-1-", "iso-latin-1-")
    ):
        return "iso-8859-1"
    return declared


def _cookie_codec(declared: str, bom: bool, path: str, row: int) -> str:
    """The codec a cookie names, or InputError where CPython refuses it."""
    try:
        info = codecs.lookup(declared)
    except LookupError:
        message = f"unknown encoding {declared!r} in the coding cookie"
        raise InputError(FileError(path, message, row, 1)) from None
    if bom:
        if _normal_name(declared) != "utf-8":
            raise InputError(
                FileError(path, f"encoding problem: a UTF-8 BOM and a {declared!r} coding cookie", row, 1)
            )
        return "utf-8-sig"
    if not getattr(info, "_is_text_encoding", True):
        message = f"encoding problem: {declared!r} is not a text encoding (Python refuses it)"
        raise InputError(FileError(path, message, row, 1))
    return info.name


def _keeps_cookie(data: bytes, text: str, row: int) -> bool:
    """True when the decoded text starts with the ASCII lines up to and including the cookie's."""
    head = b"\n".join(data.split(b"\n", row)[:row])
    try:
        ascii_head = head.decode("ascii")
    except UnicodeDecodeError:
        return True  # a non-ASCII comment before the cookie: the codec decided, as CPython's does
    return text.startswith(ascii_head)


def prepare(data: bytes, path: str) -> Prepared:
    """Decode a file's bytes (and build a notebook's program); InputError when it cannot be linted."""
    if is_notebook(path):
        from gradguard.notebook import NotebookError, parse_notebook

        if b"\0" in data:
            raise InputError(FileError(path, "binary file (it contains NUL bytes), not a notebook"))
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise InputError(FileError(path, "malformed notebook: not UTF-8 JSON")) from None
        try:
            notebook = parse_notebook(text)
        except NotebookError as exc:
            raise InputError(FileError(path, str(exc))) from None
        return Prepared(path, text, "utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8", notebook)
    text, encoding = decode(data, path)
    return Prepared(path, text, encoding)


def prescreen(data: bytes, prepared: Prepared | None = None,
              declared: tuple[Fact, ...] = ()) -> tuple[bool, tuple[str, ...]]:
    """The cheap prefilter on a file's bytes: False when it cannot hold a finding (it is not parsed),
    with the project files that verdict read besides the file itself.

    With the file's decoded text, a file that calls no backward of its own still passes when it calls a
    helper of a project module it imports that does, or one `declared` (`[tool.gradguard.api]`) to;
    its verdict then depends on those modules."""
    from gradguard.analysis import might_hold_finding
    from gradguard.analysis.reach import imported_backward

    if might_hold_finding(data, declared):
        return True, ()
    if prepared is None or prepared.notebook is not None:
        return False, ()
    reach = imported_backward(prepared.path, prepared.source)
    return reach.runs_backward, reach.files


def screen(prepared: Prepared, data: bytes | None = None, declared: tuple[Fact, ...] = ()) -> FileResult | None:
    """The cheap prefilter: a skipped result when the text cannot hold a finding, else None.

    `data`, the file's bytes, spares encoding the text again (for a script; a notebook's program is
    screened as text). `declared`: the project's `[tool.gradguard.api]` facts.
    """
    from gradguard.analysis import might_hold_finding

    if prepared.notebook is not None:
        if not prepared.notebook.is_python or not might_hold_finding(prepared.program, declared):
            return _result(prepared, (), skipped=True)
        return None
    if prescreen(data if data is not None else prepared.source.encode("utf-8", "surrogatepass"), prepared,
                 declared)[0]:
        return None
    return _result(prepared, (), skipped=True)


def syntax_error(prepared: Prepared) -> FileError | None:
    """CPython's verdict on a file the prefilter skips without parsing: its syntax error, or None.

    `compile` to bytecode is about twice as fast as `ast.parse` (no Python objects for the tree) and
    reports what `python file.py` would: the parser's errors and the compiler's (`return` outside a
    function). A notebook's program is checked with its IPython lines blanked, as the analysis sees it.
    """
    if prepared.notebook is not None and not prepared.notebook.is_python:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(prepared.program, prepared.path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        message = f"syntax error: {exc.msg}"
        row, column = exc.lineno, exc.offset
        if prepared.notebook is not None and row is not None:
            cell, cell_row = prepared.notebook.locate(row)
            return FileError(prepared.path, f"cell {cell}, line {cell_row}, column {column or 1}: {message}")
        return FileError(prepared.path, message, row, column)
    except (ValueError, RecursionError, MemoryError, OverflowError):
        return None  # the analysis reports these the same way when it gets the file
    return None


def analyse(prepared: Prepared, selection: Selection) -> FileResult:
    """Run the analysis on a prepared file and keep what the settings and `# noqa` let through.

    In a notebook, a cell that does not parse is reported and left out, and the other cells are still
    analysed (as Jupyter still runs them).
    """
    errors: list[FileError] = []
    current = prepared
    while True:
        try:
            kept, dependencies, incomplete = program_analysis(current, selection)
        except InputError as exc:
            errors.append(exc.error)
            if current.notebook is None or exc.cell is None or len(errors) > len(current.notebook.cells):
                return FileResult(
                    prepared.path, errors=tuple(errors), source=prepared.program, cells=_cells(prepared)
                )
            current = replace(current, notebook=current.notebook.without_cell(exc.cell))
            continue
        result = _result(prepared, to_file_coordinates(prepared, kept))
        notes = tuple(_note_in_file(note, prepared) for note in incomplete)
        return replace(result, errors=tuple(errors), dependencies=dependencies, incomplete=notes)


def _note_in_file(note: Note, prepared: Prepared) -> Note:
    """A note's program row as (cell, row in cell) in a notebook, as the file's row in an excerpt."""
    if note.row is None:
        return note
    if prepared.rows is not None:
        return Note(note.message, _file_row(prepared.rows, note.row), note.cell)
    if prepared.notebook is None:
        return note
    cell, row = prepared.notebook.locate(note.row)
    return Note(note.message, row, cell)


def program_diagnostics(prepared: Prepared, selection: Selection) -> tuple[Diagnostic, ...]:
    """The findings the settings and `# noqa` let through, in program coordinates (InputError)."""
    return program_analysis(prepared, selection)[0]


def program_analysis(
    prepared: Prepared, selection: Selection
) -> tuple[tuple[Diagnostic, ...], tuple[str, ...], tuple[Note, ...]]:
    """`program_diagnostics`, with the project modules the result depends on and what the analysis
    left incomplete (in program rows)."""
    program_lines = split_lines(prepared.program)
    exemption = file_exemption(prepared.program)
    if exemption.everything:
        return (), (), ()
    from gradguard.analysis import api

    with api.declared(selection.api):
        analysis = raw_analysis(prepared)
    kept = tuple(
        diagnostic
        for diagnostic in analysis.diagnostics
        if selection.enabled(diagnostic.code)
        and not exemption.covers(diagnostic.code)
        and not is_suppressed(diagnostic, program_lines)
    )
    return kept, tuple(path for path, _ in analysis.dependencies), analysis.incomplete


def to_file_coordinates(prepared: Prepared, diagnostics: tuple[Diagnostic, ...]) -> tuple[Diagnostic, ...]:
    """Map a notebook's program rows to cells, an excerpt's to the file's rows; a plain file's
    diagnostics are returned as they are."""
    if prepared.rows is not None:
        rows = prepared.rows
        return tuple(map_to_file_rows(diagnostic, rows) for diagnostic in diagnostics)
    if prepared.notebook is None:
        return diagnostics
    notebook = prepared.notebook
    return tuple(map_to_cells(diagnostic, notebook) for diagnostic in diagnostics)


def _row_words(prepared: Prepared):  # type: ignore[no-untyped-def]
    """How messages name a row of the program: by cell and line for a notebook, by the file's row for
    an excerpt."""
    rows = prepared.rows
    if rows is not None:
        return lambda row: f"line {_file_row(rows, row)}"
    notebook = prepared.notebook
    if notebook is None:
        return None

    def describe(row: int) -> str:
        cell, cell_row = notebook.locate(row)
        return f"cell {cell}, line {cell_row}"

    return describe


def raw_diagnostics(prepared: Prepared) -> tuple[Diagnostic, ...]:
    """Every finding of every rule, in program coordinates; InputError for what stops the analysis."""
    return raw_analysis(prepared).diagnostics


def raw_analysis(prepared: Prepared) -> Analysis:
    """`raw_diagnostics`, with the dependencies and the incomplete parts of the analysis."""
    if len(prepared.program) > MAX_ANALYSED_CHARS:
        size = f"{len(prepared.program) / 1e6:.1f} MB of code, the limit is {MAX_ANALYSED_CHARS / 1e6:g} MB"
        raise InputError(FileError(prepared.path, f"too large to analyse ({size}), not linted"))
    from gradguard.analysis import analyze_file
    from gradguard.parse import ParseFailure

    try:
        describe = _row_words(prepared)
        return analyze_file(prepared.program, describe, path=prepared.path)
    except ParseFailure as exc:
        cell = prepared.notebook.locate(exc.row)[0] if prepared.notebook and exc.row else None
        raise InputError(_parse_error(prepared, exc), cell) from None
    except RecursionError:
        raise InputError(FileError(prepared.path, "the code is nested too deeply to analyse")) from None
    except MemoryError:
        raise InputError(FileError(prepared.path, "out of memory while analysing this file")) from None
    except Exception as exc:  # a bug in gradguard must not stop the run
        summary = f"{type(exc).__name__}: {exc}".strip()
        raise InputError(
            FileError(prepared.path, f"internal error while analysing this file, please report it: {summary}")
        ) from None


def _parse_error(prepared: Prepared, exc: Exception) -> FileError:
    message: str = getattr(exc, "message", str(exc))
    row: int | None = getattr(exc, "row", None)
    column: int | None = getattr(exc, "column", None)
    if prepared.notebook is not None and row is not None:
        cell, cell_row = prepared.notebook.locate(row)
        return FileError(prepared.path, f"cell {cell}, line {cell_row}, column {column or 1}: {message}")
    if prepared.rows is not None and row is not None:
        row = _file_row(prepared.rows, row)
    return FileError(prepared.path, message, row, column)


def is_suppressed(diagnostic: Diagnostic, lines: list[str]) -> bool:
    """True when the flagged row carries `# noqa` or `# noqa: <this code>`.

    An unused-noqa finding (GG100) sits on the directive it reports, so only a directive naming GG100
    itself silences it, never the directive being reported.
    """
    row = diagnostic.span.start.row
    if not 1 <= row <= len(lines):
        return False
    line = lines[row - 1]
    if diagnostic.code == UNUSED_NOQA:
        return any(
            match["codes"] is not None and UNUSED_NOQA in split_codes(match["codes"])
            for match in LINE_NOQA.finditer(line)
        )
    return line_suppresses(line, diagnostic.code)


def map_to_cells(diagnostic: Diagnostic, notebook: Notebook) -> Diagnostic:
    """Program rows to (cell, row in cell): the span, the related spans and the fix edits."""
    cell, span = _map_span(diagnostic.span, notebook)
    related: list[Related] = []
    related_cells: list[int | None] = []
    for item in diagnostic.related:
        item_cell, item_span = _map_span(item.span, notebook)
        related.append(Related(item_span, item.message))
        related_cells.append(item_cell)
    fix = diagnostic.fix
    if fix is not None:
        edits: list[Edit] = []
        for edit in fix.edits:
            if edit.path is not None:  # another file's coordinates stay as they are
                edits.append(edit)
                continue
            place = notebook.locate_span(edit.span.start.row, edit.span.end.row, edit.span.end.column)
            if place is None or place[0] != cell:
                # A fix reaching into another cell cannot be shown as edits of this cell.
                fix = None
                break
            _, row, end_row = place
            edits.append(
                Edit(Span.of(row, edit.span.start.column, end_row, edit.span.end.column), edit.content)
            )
        if fix is not None:
            fix = Fix(fix.message, fix.applicability, tuple(edits))
    return replace(
        diagnostic,
        span=span,
        related=tuple(related),
        related_cells=tuple(related_cells),
        fix=fix,
        cell=cell,
    )


def _file_row(rows: tuple[int, ...], row: int) -> int:
    """The file's row of an excerpt's row (a row past its end follows the excerpt's last row)."""
    if 1 <= row <= len(rows):
        return rows[row - 1]
    return (rows[-1] if rows else 0) + row - len(rows)


def map_to_file_rows(diagnostic: Diagnostic, rows: tuple[int, ...]) -> Diagnostic:
    """An excerpt's rows to the file's: the span, the related spans and the fix edits (columns stay).

    A fix edit whose rows straddle rows the excerpt left out would also replace those: the fix is
    dropped instead.
    """

    def span(item: Span) -> Span:
        return Span(
            Location(_file_row(rows, item.start.row), item.start.column),
            Location(_file_row(rows, item.end.row), item.end.column),
        )

    fix = diagnostic.fix
    if fix is not None:
        edits = tuple(edit if edit.path is not None else Edit(span(edit.span), edit.content) for edit in fix.edits)
        contiguous = all(
            _file_row(rows, e.span.end.row) - _file_row(rows, e.span.start.row) == e.span.end.row - e.span.start.row
            for e in fix.edits if e.path is None
        )
        fix = Fix(fix.message, fix.applicability, edits) if contiguous else None
    related = tuple(Related(span(item.span), item.message) for item in diagnostic.related)
    return replace(diagnostic, span=span(diagnostic.span), related=related, fix=fix)


def _map_span(span: Span, notebook: Notebook) -> tuple[int, Span]:
    cell, row = notebook.locate(span.start.row)
    end_cell, end_row = notebook.locate(span.end.row)
    end = Location(end_row, span.end.column) if end_cell == cell else Location(row, span.start.column)
    return cell, Span(Location(row, span.start.column), end)


def _cells(prepared: Prepared) -> tuple[tuple[int, str], ...]:
    return prepared.notebook.cells if prepared.notebook is not None else ()


def _result(prepared: Prepared, diagnostics: tuple[Diagnostic, ...], *, skipped: bool = False) -> FileResult:
    return FileResult(
        prepared.path,
        diagnostics=diagnostics,
        source=prepared.program,
        skipped=skipped,
        cells=_cells(prepared),
    )


def check_prepared(prepared: Prepared, selection: Selection) -> FileResult:
    """Prefilter, then analyse, one prepared file."""
    return screen(prepared, declared=selection.api) or analyse(prepared, selection)


def check_source(text: str, path: str, settings: Settings) -> FileResult:
    """Lint source text as if it were the file at `path` (a notebook's JSON text for `.ipynb`)."""
    try:
        if is_notebook(path):
            prepared = prepare(text.encode("utf-8"), path)
        else:
            prepared = Prepared(path, text, "utf-8")
    except InputError as exc:
        return FileResult(path, errors=(exc.error,), source=text)
    return check_prepared(prepared, settings.selection(path))


def check_path(path: str, settings: Settings) -> FileResult:
    """Read, prefilter, decode and lint the file at `path`."""
    try:
        data = read_bytes(path)
        prepared = prepare(data, path)
    except InputError as exc:
        return FileResult(path, errors=(exc.error,))
    selection = settings.selection(path)
    return screen(prepared, data, selection.api) or analyse(prepared, selection)
