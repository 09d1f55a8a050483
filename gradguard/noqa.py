"""`# noqa` comments: the line directive, the file-level `# gradguard: noqa`, and adding directives.

ruff's conventions. `# noqa` silences every finding on its line and `# noqa: GG001, GG003` the codes it
lists (other tools' codes may stand beside gradguard's). A comment line `# gradguard: noqa` anywhere in a
file silences the whole file, `# gradguard: noqa: GG003` one rule in it. Pure text functions: no I/O.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

_CODES = r"[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*"
LINE_NOQA = re.compile(rf"#\s*noqa(?::[\s]?(?P<codes>{_CODES}))?", re.IGNORECASE)
FILE_NOQA = re.compile(rf"^[ \t\f]*#\s*gradguard\s*:\s*noqa(?:\s*:\s*(?P<codes>{_CODES}))?\s*$", re.IGNORECASE)
_SEPARATOR = re.compile(r"[,\s]+")


def split_codes(text: str) -> list[str]:
    """`"GG001, GG003"` as `["GG001", "GG003"]` (upper case)."""
    return [code.upper() for code in _SEPARATOR.split(text) if code]


@dataclass(frozen=True)
class FileExemption:
    """What the file-level directives of one file silence: everything, or some codes."""

    everything: bool = False
    codes: frozenset[str] = frozenset()

    def covers(self, code: str) -> bool:
        """True when findings of `code` are silenced in the whole file."""
        return self.everything or code.upper() in self.codes


def file_exemption(source: str) -> FileExemption:
    """The file-level `# gradguard: noqa` directives of `source` (comment lines, not text in strings)."""
    if "gradguard" not in source:
        return FileExemption()
    candidates = {
        row for row, line in enumerate(source.splitlines(), start=1) if "gradguard" in line and FILE_NOQA.match(line)
    }
    if not candidates:
        return FileExemption()
    everything = False
    codes: set[str] = set()
    for row, comment in _comments(source):
        if row in candidates:
            match = FILE_NOQA.match(comment)
            if match is None:
                continue
            if match["codes"] is None:
                everything = True
            else:
                codes.update(split_codes(match["codes"]))
    return FileExemption(everything, frozenset(codes))


def _comments(source: str) -> Iterator[tuple[int, str]]:
    """(row, text) of every comment of `source`, as far as it tokenizes."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                yield token.start[0], token.string
    except (tokenize.TokenError, SyntaxError):
        return


def line_suppresses(line: str, code: str) -> bool:
    """True when `line` carries `# noqa` or `# noqa: <code>`."""
    if "#" not in line:
        return False
    for match in LINE_NOQA.finditer(line):
        codes = match["codes"]
        if codes is None or code.upper() in split_codes(codes):
            return True
    return False


@dataclass(frozen=True)
class Directive:
    """A `# noqa: CODES` comment: its row, the columns of the directive (1-based, end exclusive), codes."""

    row: int
    start: int
    end: int
    codes: tuple[str, ...]
    comment_start: int  # where the whole comment starts (the `#` of `# noqa` or of an earlier comment)
    line_end: int  # the column past the line's last character


def directives(source: str) -> list[Directive]:
    """Every `# noqa: CODES` directive written in a real comment (not in a string) of `source`."""
    if "noqa" not in source.lower():
        return []
    found: list[Directive] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type != tokenize.COMMENT or "noqa" not in token.string.lower():
                continue
            row, column = token.start
            for match in LINE_NOQA.finditer(token.string):
                if match["codes"] is None:
                    continue
                found.append(
                    Directive(
                        row=row,
                        start=column + match.start() + 1,
                        end=column + match.end() + 1,
                        codes=tuple(split_codes(match["codes"])),
                        comment_start=column + 1,
                        line_end=column + len(token.string) + 1,
                    )
                )
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return found
    return found


def with_codes_added(line: str, codes: Iterable[str]) -> str | None:
    """`line` with `# noqa: CODES` added or merged into its directive; None where a comment cannot go."""
    wanted = sorted({code.upper() for code in codes})
    body = line.rstrip("\r\n")
    ending = line[len(body) :]
    if body.rstrip().endswith("\\"):
        return None  # a comment after a line continuation is a syntax error
    for match in LINE_NOQA.finditer(body):
        if match["codes"] is None:
            return line  # a bare `# noqa` already silences everything
        merged = sorted(set(split_codes(match["codes"])) | set(wanted))
        return body[: match.start()] + f"# noqa: {', '.join(merged)}" + body[match.end() :] + ending
    return f"{body.rstrip()}  # noqa: {', '.join(wanted)}{ending}"


def add_directives(source: str, codes_by_row: Mapping[int, Iterable[str]]) -> tuple[str, int]:
    """`source` with a `# noqa: CODES` on each row given; returns (new text, directives added)."""
    lines = source.splitlines(keepends=True)
    added = 0
    for row, codes in codes_by_row.items():
        if not 1 <= row <= len(lines):
            continue
        new = with_codes_added(lines[row - 1], codes)
        if new is not None and new != lines[row - 1]:
            lines[row - 1] = new
            added += 1
    return "".join(lines), added
