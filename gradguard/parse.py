"""Source text to a libcst module; a syntax error becomes a `ParseFailure` naming the line, never a crash."""

from __future__ import annotations

import ast
import dataclasses
import re
import threading
import warnings
from collections.abc import Callable, Iterator
from functools import cache
from typing import TypeVar

import libcst as cst

# CPython refuses more than 200 nested brackets ("too many nested parentheses"); libcst does not, and
# spends time quadratic in the depth on them.
_CPYTHON_MAX_BRACKETS = 200
_BRACKET = re.compile(r"[\[\](){}]")
# libcst's native parser recurses on the C stack: code nested a couple of thousand levels deep (brackets,
# operator chains, adjacent strings) overflows a main thread's 8 MiB and kills the process. It parses on a
# thread whose stack is reserved this large (only the pages it reaches are used), where such code ends in
# an exception instead.
_PARSER_STACK_BYTES = 256 * 1024 * 1024

_Node = TypeVar("_Node", bound=cst.CSTNode)


@cache
def _node_fields(kind: type[cst.CSTNode]) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(kind))  # type: ignore[arg-type]


def _children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """A node's children read from its fields: what `node.children` holds, not in lexical order, at a
    fraction of its cost (libcst computes `children` by rebuilding the node with a visitor)."""
    for name in _node_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (tuple, list)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    yield item


def every_node(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under `root`, `root` included, in no particular order (fast: for maps and searches
    whose result does not depend on order)."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(_children(node))


def parent_map(root: cst.CSTNode) -> dict[cst.CSTNode, cst.CSTNode]:
    """Each node's parent under `root` (nodes hash by identity)."""
    parents: dict[cst.CSTNode, cst.CSTNode] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for child in _children(node):
            parents[child] = node
            stack.append(child)
    return parents


def nodes_of(root: cst.CSTNode, kind: type[_Node]) -> Iterator[_Node]:
    """The nodes of type `kind` in the tree under `root`, `root` included (what `libcst.matchers.findall`
    finds for `kind()`, without importing the matchers: their module alone takes ~0.2 s to import)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, kind):
            yield node
        stack.extend(reversed(node.children))


class ParseFailure(Exception):
    """The text is not valid Python 3 (as far as libcst can tell)."""

    def __init__(self, message: str, row: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.row = row
        self.column = column


def parse_module(source: str) -> cst.Module:
    """Parse `source` with libcst, turning every parser failure into a `ParseFailure`."""
    _refuse_what_cpython_cannot_nest(source)
    try:
        return _on_large_stack(cst.parse_module, source)
    except cst.ParserSyntaxError as exc:
        raise _describe(source, exc) from None
    except RecursionError:
        raise ParseFailure("the code is nested too deeply to analyse") from None
    except (ValueError, TypeError, UnicodeError) as exc:
        raise ParseFailure(f"cannot parse: {exc}") from None


def _refuse_what_cpython_cannot_nest(source: str) -> None:
    """A `ParseFailure` for code nested deeper than CPython itself can compile.

    CPython stops such code cheaply (RecursionError or MemoryError past a few thousand levels, a syntax
    error past 200 brackets), while libcst would take minutes over it. Other syntax errors are left to
    libcst, which knows newer grammar than the running interpreter.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source)
    except SyntaxError as syntax:
        if _bracket_depth(source) > _CPYTHON_MAX_BRACKETS:
            raise ParseFailure(f"syntax error: {syntax.msg}", syntax.lineno, syntax.offset) from None
    except (RecursionError, MemoryError):
        raise ParseFailure("the code is nested too deeply to analyse") from None
    except ValueError:  # e.g. NUL characters: libcst has its own verdict
        pass


def _bracket_depth(source: str) -> int:
    """How deep brackets nest, counting those inside strings and comments too (an upper bound)."""
    depth = deepest = 0
    for match in _BRACKET.finditer(source):
        if match.group() in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif depth:
            depth -= 1
    return deepest


def _on_large_stack(parse: Callable[[str], cst.Module], source: str) -> cst.Module:
    """`parse(source)` on a thread with a large stack (here when no such thread can be started)."""
    outcome: dict[str, cst.Module | BaseException] = {}

    def run() -> None:
        try:
            outcome["module"] = parse(source)
        except BaseException as exc:  # handed over to the calling thread as it is
            outcome["error"] = exc

    previous = threading.stack_size()
    try:
        threading.stack_size(_PARSER_STACK_BYTES)
        thread = threading.Thread(target=run, name="gradguard-parse", daemon=True)
        thread.start()
    except (RuntimeError, ValueError, MemoryError):
        return parse(source)
    finally:
        threading.stack_size(previous)
    thread.join()
    error = outcome.get("error")
    if isinstance(error, BaseException):
        raise error
    module = outcome["module"]
    assert isinstance(module, cst.Module)
    return module


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
