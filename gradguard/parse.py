"""Source text to a libcst module; a syntax error becomes a `ParseFailure` naming the line, never a crash."""

from __future__ import annotations

import ast
import collections.abc
import dataclasses
import inspect
import re
import textwrap
import threading
import typing
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
    """The nodes of type `kind` in the tree under `root`, `root` included, in source order (what
    `libcst.matchers.findall` finds for `kind()`, without importing the matchers: their module alone
    takes ~0.2 s to import)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, kind):
            yield node
        stack.extend(reversed(_syntax_children(node)))


# Layout only: no analysis asks about it, and it is about half of a tree's nodes.
_LAYOUT = (
    cst.BaseParenthesizableWhitespace, cst.EmptyLine, cst.TrailingWhitespace, cst.Newline, cst.Comment,
)


@cache
def _visit_order(kind: type[cst.CSTNode]) -> tuple[str, ...]:
    """The fields of a node type in the order libcst's visitors visit them (source order), read from
    its `_visit_and_replace_children`; the dataclass's field order where that code cannot be read."""
    try:
        source = textwrap.dedent(inspect.getsource(kind._visit_and_replace_children))
        calls = [
            node for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.startswith("visit_")
            and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
        ]
    except (OSError, TypeError, SyntaxError):
        return _node_fields(kind)
    calls.sort(key=lambda call: (call.lineno, call.col_offset))
    order = tuple(dict.fromkeys(str(call.args[1].value) for call in calls))  # type: ignore[attr-defined]
    return order or _node_fields(kind)


def _classes_in(annotation: object) -> Iterator[object]:
    arguments = typing.get_args(annotation)
    if arguments:
        for argument in arguments:
            yield from _classes_in(argument)
    else:
        yield annotation


def _is_layout(annotation: object) -> bool:
    """A field's type admits only layout nodes (or None, or no node at all)."""
    found = False
    for item in _classes_in(annotation):
        if item is type(None) or item is cst.MaybeSentinel:
            continue
        if not (isinstance(item, type) and issubclass(item, _LAYOUT)):
            return False
        found = True
    return found


_ONE, _MAYBE, _MANY = 0, 1, 2


@cache
def _child_fields(kind: type[cst.CSTNode]) -> tuple[tuple[str, int], ...]:
    """The fields of `kind` that may hold syntax nodes, in visiting order, each with its shape."""
    declared = {f.name: f.type for f in dataclasses.fields(kind)}  # type: ignore[arg-type]
    shaped: list[tuple[str, int]] = []
    for name in _visit_order(kind):
        annotation = declared.get(name)
        if annotation is None or isinstance(annotation, str) or _is_layout(annotation):
            shape = _MAYBE if annotation is None or isinstance(annotation, str) else -1
        elif typing.get_origin(annotation) in (collections.abc.Sequence, list, tuple):
            shape = _MANY
        elif isinstance(annotation, type) and issubclass(annotation, cst.CSTNode):
            shape = _ONE
        else:
            shape = _MAYBE
        if shape >= 0:
            shaped.append((name, shape))
    return tuple(shaped)


def _syntax_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """A node's children in source order, without whitespace, empty lines and comments."""
    found: list[cst.CSTNode] = []
    for name, shape in _child_fields(type(node)):
        value = getattr(node, name)
        if shape == _ONE:
            found.append(value)
        elif shape == _MANY:
            found.extend(value)
        elif isinstance(value, cst.CSTNode):
            if not isinstance(value, _LAYOUT):
                found.append(value)
        elif isinstance(value, (tuple, list)):
            found.extend(item for item in value if isinstance(item, cst.CSTNode) and not isinstance(item, _LAYOUT))
    return found


_Hooks = tuple[Callable[..., object] | None, Callable[..., object] | None]


@cache
def _hooks(visitor: type[cst.CSTVisitor], kind: type[cst.CSTNode]) -> _Hooks:
    name = kind.__name__
    return getattr(visitor, f"visit_{name}", None), getattr(visitor, f"leave_{name}", None)


def walk(root: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """What `root.visit(visitor)` does for a visitor that only reads the tree, in a fraction of the time:
    the same `visit_*`/`leave_*` calls (and `on_visit`/`on_leave` where the visitor overrides them),
    in the same order, except that whitespace, empty lines and comments are not visited. libcst's own
    walk rebuilds every node it passes; this one only reads fields."""
    custom = type(visitor).on_visit is not cst.CSTVisitor.on_visit or \
        type(visitor).on_leave is not cst.CSTVisitor.on_leave
    stack: list[tuple[cst.CSTNode, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        if custom:
            if leaving:
                visitor.on_leave(node)
                continue
            descend = visitor.on_visit(node)
        else:
            enter, leave = _hooks(type(visitor), type(node))
            if leaving:
                if leave is not None:
                    leave(visitor, node)
                continue
            descend = enter is None or enter(visitor, node) is not False
        stack.append((node, True))
        if descend:
            stack.extend((child, False) for child in reversed(_syntax_children(node)))


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



def newlines_in(node: cst.CSTNode) -> int:
    """How many line breaks the code of `node` holds (what `code_for_node(node).count("\\n")` says),
    without generating the code, whose recursion a deeply nested expression overflows: each line ends
    in a trailing whitespace or an empty line, and a string or a backslash continuation may hold more."""
    count = 0
    for inner in every_node(node):
        kind = type(inner)
        if kind is cst.TrailingWhitespace or kind is cst.EmptyLine:
            count += 1
        elif kind is cst.SimpleString or kind is cst.FormattedStringText or kind is cst.SimpleWhitespace:
            count += inner.value.count("\n")  # type: ignore[attr-defined]
    return count
