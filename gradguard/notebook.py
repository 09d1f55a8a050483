"""A Jupyter notebook as one Python program: its code cells in order, IPython syntax blanked out.

Every line of the program comes from exactly one line of one code cell, so a finding's row maps back to
(cell, row in cell) and its columns stay as they are. IPython-only lines (`%magic`, `!shell`, `x = !cmd`,
`obj?`) become `pass`-like lines of the same indentation, so the program still parses and the rows stay
aligned. A cell whose `%%magic` runs another language (`%%bash`, `%%writefile`, ...) is blanked whole;
`%%time`-like cell magics keep their Python body.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any

# Cell magics whose body is Python that IPython runs as such.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})

# `%name` and `!cmd` (but not `% b` or `!= b` continuing an expression), `?name` help.
# `% matplotlib inline` too: IPython reads the magic's name after blanks (no Python line starts with `%`).
_MAGIC_LINE = re.compile(r"^(?P<indent>[ \t]*)(?:%[ \t]*[%\w]|![^=]|!$|\?)")
_ASSIGNED_MAGIC = re.compile(r"^(?P<target>[ \t]*[\w.\[\], ]+?[ \t]*=[ \t]*)(?:%\w|![^=])")
_NEWLINE = re.compile(r"\r\n|\r|\n")
_HELP_SUFFIX = re.compile(r"^[ \t]*[\w.]+\?\??[ \t]*$")


class NotebookError(Exception):
    """The file is not a usable Jupyter notebook (the message says why)."""


@dataclass(frozen=True)
class Notebook:
    """The parsed notebook: its JSON document, its code cells and the program made of them."""

    document: dict[str, Any]
    # (cell index 1-based into `cells`, cell source) for each code cell, in order.
    cells: tuple[tuple[int, str], ...]
    program: str
    # rows[i] = (cell index, row within the cell) of program row i + 1.
    rows: tuple[tuple[int, int], ...]
    # Python-ness: False when the kernel runs another language (the program is then empty).
    is_python: bool = True

    def locate(self, row: int) -> tuple[int, int]:
        """(cell index, row within the cell) of a 1-based program row."""
        if not self.rows:
            return (1, row)
        index = min(max(row, 1), len(self.rows)) - 1
        cell, cell_row = self.rows[index]
        return cell, cell_row + (row - index - 1)

    def locate_span(self, start_row: int, end_row: int, end_column: int) -> tuple[int, int, int] | None:
        """(cell, start row in cell, end row in cell) of a program span, or None when it crosses cells.

        A span ending at column 1 of the row after a cell's last line (its trailing newline included)
        stays in that cell: its end row is then the cell's row count + 1.
        """
        cell, row = self.locate(start_row)
        end_cell, cell_end_row = self.locate(end_row)
        if end_cell == cell and (end_row <= len(self.rows) or end_column == 1):
            return cell, row, cell_end_row
        if end_column == 1 and end_row > start_row:
            before_cell, before_row = self.locate(end_row - 1)
            if before_cell == cell:
                return cell, row, before_row + 1
        return None

    def without_cell(self, cell: int) -> Notebook:
        """The same notebook with one cell's lines blank in the program (rows stay aligned)."""
        lines = self.program.splitlines(keepends=True) if self.program else []
        blanked = [
            "\n" if found == cell else line for line, (found, _) in zip(lines, self.rows, strict=False)
        ]
        return replace(self, program="".join(blanked))


def _where_digits(text: str) -> str:
    """` (line L, column C)` of the first number too long for Python to read, as JSON errors say it."""
    found = re.search(r"\d{4000,}", text)
    if found is None:
        return ""
    line = text.count("\n", 0, found.start()) + 1
    return f" (line {line}, column {found.start() - (text.rfind(chr(10), 0, found.start()) + 1) + 1})"


def cell_source(cell: dict[str, Any]) -> str:
    """A cell's source as one string (nbformat stores a string or a list of lines)."""
    source = cell.get("source", "")
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def _language(document: dict[str, Any]) -> str | None:
    metadata = document.get("metadata")
    if not isinstance(metadata, dict):
        return None
    for key, field in (("kernelspec", "language"), ("language_info", "name")):
        value = metadata.get(key)
        if isinstance(value, dict) and isinstance(value.get(field), str):
            return value[field].lower()
    return None


def parse_notebook(text: str) -> Notebook:
    """Build the program of a notebook's code cells; NotebookError when the JSON is not a notebook."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(
            f"malformed notebook JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise NotebookError("malformed notebook JSON: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer past Python's 4,300-digit conversion limit
        reason = str(exc).split(";")[0]
        raise NotebookError(f"malformed notebook JSON: {reason}{_where_digits(text)}") from None
    if isinstance(document, dict) and "worksheets" in document and "cells" not in document:
        raise NotebookError(
            "an nbformat 3 notebook (cells inside 'worksheets'); "
            "upgrade it with `jupyter nbconvert --to notebook`"
        )
    if not isinstance(document, dict) or not isinstance(document.get("cells"), list):
        raise NotebookError("not a Jupyter notebook: no 'cells' list at the top level")
    language = _language(document)
    if language is not None and language != "python":
        return Notebook(document, (), "", (), is_python=False)
    cells: list[tuple[int, str]] = []
    lines: list[str] = []
    rows: list[tuple[int, int]] = []
    for index, cell in enumerate(document["cells"], start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell_source(cell)
        cells.append((index, source))
        for row, line in enumerate(python_lines(source), start=1):
            lines.append(line)
            rows.append((index, row))
    return Notebook(document, tuple(cells), "".join(lines), tuple(rows))


def python_lines(source: str) -> list[str]:
    """The lines of one cell with IPython syntax replaced, each ending with a newline."""
    lines = split_lines(source)
    if not lines:
        return []
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        name = lines[first].lstrip()[2:].split(maxsplit=1)[0] if lines[first].strip() != "%%" else ""
        if name not in PYTHON_CELL_MAGICS:
            return ["\n"] * len(lines)
        lines[first] = ""
    # IPython removes the first line's indentation from every line that starts with it (` !pip install
    # x` alone in a cell runs): the stand-ins of IPython-only lines lose it too. Python lines keep theirs,
    # so that columns stay as they are.
    lead = lines[0][: len(lines[0]) - len(lines[0].lstrip(" \t"))]
    out: list[str] = []
    continued = False
    for line in lines:
        if continued:
            out.append("\n")
            continued = line.endswith("\\")
            continue
        replaced = _replace_ipython(line)
        if replaced is not None:
            continued = line.endswith("\\")
            line = replaced[len(lead):] if lead and replaced.startswith(lead) else replaced
        out.append(line + "\n")
    return out


def split_lines(text: str) -> list[str]:
    """The lines of `text` without their endings, split on the newlines Python itself knows."""
    lines = _NEWLINE.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _replace_ipython(line: str) -> str | None:
    """A Python stand-in for an IPython-only line, or None when the line is plain Python."""
    assigned = _ASSIGNED_MAGIC.match(line)
    if assigned is not None and not line.lstrip().startswith(("%", "!", "?")):
        return assigned["target"] + "None"
    magic = _MAGIC_LINE.match(line)
    if magic is not None:
        return magic["indent"] + "pass"
    if _HELP_SUFFIX.match(line):
        return line[: len(line) - len(line.lstrip())] + "pass"
    return None


def replace_cell_sources(document: dict[str, Any], sources: dict[int, str]) -> dict[str, Any]:
    """A copy of the notebook document with the given cells' sources replaced (kept as lists of lines
    when they were lists, as nbformat writes them)."""
    cells = []
    for index, cell in enumerate(document["cells"], start=1):
        if index in sources and isinstance(cell, dict):
            cell = dict(cell)
            new = sources[index]
            cell["source"] = new.splitlines(keepends=True) if isinstance(cell.get("source"), list) else new
        cells.append(cell)
    return {**document, "cells": cells}


def dump_notebook(document: dict[str, Any], original: str) -> str:
    """Serialise a notebook the way it was written, so that only the edited cells change: the indent
    (spaces or tabs), the line ending, non-ASCII text escaped or not, and the trailing newline are taken
    from `original`."""
    newline = "\r\n" if "\r\n" in original else "\n"
    lines = original.split(newline, 2)
    indent: str | None = None
    if len(lines) > 1:
        indent = lines[1][: len(lines[1]) - len(lines[1].lstrip(" \t"))] or None
    text = json.dumps(document, indent=indent, ensure_ascii=original.isascii())
    if original.endswith("\n"):
        text += "\n"
    return text.replace("\n", newline) if newline != "\n" else text
