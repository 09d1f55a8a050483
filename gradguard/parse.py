"""Source text to a libcst module; a syntax error becomes a `ParseFailure` naming the line, never a crash."""

from __future__ import annotations

import ast
import warnings

import libcst as cst


class ParseFailure(Exception):
    """The text is not valid Python 3 (as far as libcst can tell)."""

    def __init__(self, message: str, row: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.row = row
        self.column = column


def parse_module(source: str) -> cst.Module:
    """Parse `source` with libcst, turning every parser failure into a `ParseFailure`."""
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise _describe(source, exc) from None
    except RecursionError:
        raise ParseFailure("the code is nested too deeply to analyse") from None
    except (ValueError, TypeError, UnicodeError) as exc:
        raise ParseFailure(f"cannot parse: {exc}") from None


def _describe(source: str, exc: cst.ParserSyntaxError) -> ParseFailure:
    """CPython's own message is the one users know ("Missing parentheses in call to 'print'")."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source)
    except SyntaxError as syntax:
        return ParseFailure(f"syntax error: {syntax.msg}", syntax.lineno, syntax.offset)
    except (RecursionError, MemoryError, ValueError):
        pass
    return ParseFailure("syntax error: libcst cannot parse this line", exc.raw_line, exc.raw_column + 1)
