"""Reading the user's source at error time: assignments, loops and calls around a line.

The runtime side may parse source with `ast` (it runs once, after the error). Everything is keyed by
filename and 1-based line; files come from `linecache`, which also holds IPython cells and the
scripts `runpy` ran.
"""

from __future__ import annotations

import ast
import linecache
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import CodeType

from gradguard.analysis.api import std_builtins
from gradguard.analysis.api.facts import Receiver
from gradguard.analysis.api.torch_functions import (
    BACKWARD_FUNCTION,
    GRAD_FUNCTION,
    ROOT_KEYWORDS,
)
from gradguard.analysis.api.torch_tensor import BACKWARD
from gradguard.causes import branch_test

LOOPS = (ast.For, ast.AsyncFor, ast.While)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def cell_number(filename: str | None) -> int | None:
    """The execution count of the IPython cell compiled as `filename` (the N of `Cell In[N]`), or None.

    IPython compiles each cell to a temporary file name (`/tmp/ipykernel_<pid>/<hash>.py`) and keeps the
    name-to-count map on its compiler; outside IPython, or for a real file, there is none.
    """
    if not filename or "IPython" not in sys.modules:
        return None
    try:
        shell = sys.modules["IPython"].get_ipython()
        number = shell.compile._filename_map.get(filename) if shell is not None else None
    except Exception:  # noqa: BLE001 - IPython's internals vary across versions; fall back to the path
        return None
    return number if isinstance(number, int) else None


def unparse(node: ast.AST) -> str:
    """Source text for an expression (normalised by `ast.unparse`)."""
    return ast.unparse(node)


@dataclass
class SourceFile:
    """One parsed file, with a parent map to climb from a node to its enclosing statements."""

    filename: str
    text: str
    tree: ast.Module
    parents: dict[ast.AST, ast.AST] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for parent in ast.walk(self.tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent

    def line(self, row: int) -> str:
        """The text of 1-based line `row`, stripped."""
        lines = self.text.splitlines()
        return lines[row - 1].strip() if 0 < row <= len(lines) else ""

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        """The nodes enclosing `node`, innermost first."""
        node_parent = self.parents.get(node)
        while node_parent is not None:
            yield node_parent
            node_parent = self.parents.get(node_parent)

    def scope_for(self, code: CodeType | None) -> ast.AST:
        """The function (or the module) whose body is `code`."""
        if code is None or code.co_name == "<module>":
            return self.tree
        first = code.co_firstlineno
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code.co_name:
                starts = [node.lineno] + [d.lineno for d in node.decorator_list]
                if first in starts:
                    return node
        return self.tree

    def statement_at(self, scope: ast.AST, row: int) -> ast.stmt | None:
        """The innermost statement of `scope` that spans line `row`."""
        best: ast.stmt | None = None
        for node in _walk_scope(scope):
            spans = isinstance(node, ast.stmt) and node.lineno <= row <= (node.end_lineno or node.lineno)
            if spans and (best is None or node.lineno >= best.lineno):  # type: ignore[attr-defined]
                best = node  # type: ignore[assignment]
        return best

    def loops_around(self, scope: ast.AST, row: int) -> list[ast.AST]:
        """The loops of `scope` whose body contains line `row`, innermost first."""
        statement = self.statement_at(scope, row)
        if statement is None:
            return []
        loops = []
        for parent in self.ancestors(statement):
            if parent is scope:
                break
            if isinstance(parent, LOOPS):
                loops.append(parent)
        return loops

    def function_at(self, row: int) -> ast.AST:
        """The innermost function whose body spans line `row` (the module when none)."""
        best: ast.AST = self.tree
        for node in ast.walk(self.tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            spans = node.lineno <= row <= (node.end_lineno or node.lineno)
            if spans and (best is self.tree or node.lineno >= best.lineno):  # type: ignore[attr-defined]
                best = node
        return best

    def enclosing_function(self, row: int) -> str:
        """The qualified name of the function around line `row` (`Class.method`, `<module>`)."""
        scope = self.function_at(row)
        if scope is self.tree:
            return "<module>"
        names = [scope.name]  # type: ignore[attr-defined]
        for parent in self.ancestors(scope):
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names.append(f"{parent.name}.<locals>")
            elif isinstance(parent, ast.ClassDef):
                names.append(parent.name)
        return ".".join(reversed(names))

    def segment(self, node: ast.AST) -> str:
        """The exact source text of `node`."""
        return ast.get_source_segment(self.text, node) or unparse(node)


def load(filename: str, cache: dict[str, SourceFile | None]) -> SourceFile | None:
    """Parse `filename` (from linecache), memoised in `cache`; None when it cannot be read or parsed."""
    if filename in cache:
        return cache[filename]
    text = "".join(linecache.getlines(filename))
    parsed: SourceFile | None = None
    if text:
        try:
            parsed = SourceFile(filename, text, _parse(text))
        except (SyntaxError, ValueError, RecursionError, SystemError):
            parsed = None
    cache[filename] = parsed
    return parsed


def _parse(text: str) -> ast.Module:
    """`ast.parse`, retried once: CPython 3.11 can raise a spurious SystemError ("AST constructor
    recursion depth mismatch") when another thread parses at the same moment."""
    try:
        return ast.parse(text)
    except SystemError:
        return ast.parse(text)


def _walk_scope(scope: ast.AST) -> Iterator[ast.AST]:
    """Every node of `scope`, not descending into nested functions or classes."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (*FUNCTIONS, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def expression_key(node: ast.AST) -> str | None:
    """`name` or `a.b.c` for a Name/Attribute chain, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = expression_key(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _targets(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return [node.target]
    if isinstance(node, ast.NamedExpr):
        return [node.target]
    if isinstance(node, ast.withitem) and node.optional_vars is not None:
        return [node.optional_vars]
    return []


def _flatten(target: ast.AST) -> Iterator[ast.AST]:
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _flatten(element)
    elif isinstance(target, ast.Starred):
        yield from _flatten(target.value)
    else:
        yield target


@dataclass(frozen=True)
class Assignment:
    """A statement that (re)binds an expression: its line, the statement and its right-hand side."""

    line: int
    statement: ast.AST
    value: ast.AST | None
    augmented: bool


def assignments(scope: ast.AST, key: str) -> list[Assignment]:
    """Every statement of `scope` that binds `key` (a name or `self.h`), in source order."""
    found: list[Assignment] = []
    for node in _walk_scope(scope):
        for target in _targets(node):
            for leaf in _flatten(target):
                if expression_key(leaf) == key:
                    value = getattr(node, "value", None) if not isinstance(node, ast.withitem) else None
                    found.append(Assignment(node.lineno, node, value, isinstance(node, ast.AugAssign)))
    found.sort(key=lambda a: a.line)
    return found


def last_assignment(source: SourceFile, scope: ast.AST, key: str, row: int) -> Assignment | None:
    """The assignment of `key` that most likely ran last before line `row` ran.

    Prefer the last one before `row` inside the innermost loop around `row`; else one after `row` in
    that loop (it ran in the previous iteration); else the last one before `row`; else the last one.
    """
    found = assignments(scope, key)
    if not found:
        return None
    for loop in source.loops_around(scope, row):
        inside = [a for a in found if loop.lineno <= a.line <= (loop.end_lineno or loop.lineno)]
        before = [a for a in inside if a.line <= row]
        if before:
            return before[-1]
        if inside:
            return inside[-1]
    before = [a for a in found if a.line <= row]
    return before[-1] if before else found[-1]


def names_in(node: ast.AST | None) -> set[str]:
    """The `name` and `a.b` keys read anywhere in an expression."""
    if node is None:
        return set()
    keys: set[str] = set()
    for child in ast.walk(node):
        key = expression_key(child)
        if key:
            keys.add(key)
    return keys


def is_self_carried(source: SourceFile, scope: ast.AST, key: str) -> bool:
    """True when some assignment of `key` reads `key` itself (`h = cell(x, h)`, `total += loss`)."""
    for assignment in assignments(scope, key):
        if assignment.augmented or key in names_in(assignment.value):
            return True
    return False


def backward_call(source: SourceFile, row: int) -> ast.Call | None:
    """The backward or grad call on line `row` (`loss.backward()`, `torch.autograd.grad(...)`, `g(...)`)."""
    candidates = [n for n in ast.walk(source.tree) if isinstance(n, ast.Call) and n.lineno <= row <= (n.end_lineno or n.lineno)]
    candidates.sort(key=lambda c: (c.lineno != row, c.col_offset))

    def called(call: ast.Call) -> str:
        func = call.func
        return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""

    names = (BACKWARD, _last(GRAD_FUNCTION))
    for wanted in (lambda n: n in names, lambda n: any(part in n for part in names)):
        for call in candidates:
            if wanted(called(call)):
                return call
    return None


def backward_receiver(source: SourceFile, call: ast.Call) -> str | None:
    """What a backward call differentiates: `loss` in `loss.backward()` or `backward(loss)`."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == BACKWARD and not _is_module_path(func.value):
        return source.segment(func.value)
    if call.args:
        return source.segment(call.args[0])
    for keyword in call.keywords:
        if keyword.arg in ROOT_KEYWORDS:
            return source.segment(keyword.value)
    return None


def _is_module_path(node: ast.AST) -> bool:
    key = expression_key(node)
    # `torch.autograd.backward(loss)`, `autograd.backward(loss)`, `ag.backward(loss)`: a function, not a receiver.
    return key is not None and key.split(".")[0] in (*BACKWARD_FUNCTION.split(".")[:-1], "ag")


def with_keyword(source: SourceFile, call: ast.Call, keyword: str) -> str:
    """The call's source text with `keyword=True` added (or set) to it."""
    text = source.segment(call)
    for existing in call.keywords:
        if existing.arg == keyword:
            start = ast.get_source_segment(source.text, existing) or f"{keyword}={unparse(existing.value)}"
            return text.replace(start, f"{keyword}=True", 1)
    inner = text[: text.rstrip().rfind(")")].rstrip()
    separator = "" if inner.endswith("(") else ", "
    return f"{inner}{separator}{keyword}=True)"


def call_passing(source: SourceFile, scope: ast.AST, key: str, first: int, last: int) -> ast.Call | None:
    """The first call in lines [first, last] of `scope` that takes `key` as a direct argument."""
    best: ast.Call | None = None
    for node in _walk_scope(scope):
        if not isinstance(node, ast.Call) or not first <= node.lineno <= last:
            continue
        passes = any(expression_key(arg) == key for arg in node.args)
        if passes and (best is None or (node.lineno, node.col_offset) < (best.lineno, best.col_offset)):
            best = node
    return best


def depends_on(scope: ast.AST, target: str, source_key: str) -> bool:
    """True when `target` is computed (through assignments in `scope`) from `source_key`."""
    tainted = {source_key}
    statements = [n for n in _walk_scope(scope) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))]
    changed = True
    while changed:
        changed = False
        for statement in statements:
            value_names = names_in(getattr(statement, "value", None))
            if isinstance(statement, ast.AugAssign):
                value_names |= names_in(statement.target)
            if not value_names & tainted:
                continue
            for bound in _targets(statement):
                for leaf in _flatten(bound):
                    key = expression_key(leaf)
                    if key and key not in tainted:
                        tainted.add(key)
                        changed = True
    return target in tainted or bool(names_in(parse_expression(target)) & tainted)


def used_as_tensor_after(scope: ast.AST, statement: ast.stmt, names: set[str]) -> bool:
    """Whether code of `scope` after `statement` reads one of `names` as a tensor: not only inside a
    tensor method whose result leaves the graph (`g.norm().item()`, the API facts' VALUE or CUT) or
    a bare call that shows it (`print(g)`). What a helper does with the gradient it took."""
    from gradguard.analysis import api
    from gradguard.analysis.api.facts import Returns

    def leaves(call: ast.Call) -> bool:
        if not isinstance(call.func, ast.Attribute):
            return False
        fact = api.method(call.func.attr, Receiver.TENSOR)
        return fact is not None and fact.returns in (Returns.VALUE, Returns.CUT)

    def reads(node: ast.AST) -> bool:
        if isinstance(node, ast.Call) and leaves(node):
            return False
        if isinstance(node, ast.Name) and node.id in names:
            return True
        return any(reads(child) for child in ast.iter_child_nodes(node))

    def shows(call: ast.Call) -> bool:
        name = unparse(call.func) if isinstance(call.func, (ast.Name, ast.Attribute)) else None
        fact = api.lookup(name) if name is not None else None
        return fact is not None and fact.receiver is None and fact.returns is Returns.NONE \
            and fact.backward is None and fact.stores is None

    end = statement.end_lineno or statement.lineno
    after = [n for n in _walk_scope(scope) if isinstance(n, ast.stmt) and n.lineno > end]
    for node in after:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and shows(node.value):
            continue
        if any(reads(child) for child in ast.iter_child_nodes(node) if not isinstance(child, ast.stmt)):
            return True
    return False


def parse_expression(text: str) -> ast.AST | None:
    """The expression node for `text`, or None when it does not parse."""
    try:
        return ast.parse(text, mode="eval").body
    except SyntaxError:
        return None


@dataclass(frozen=True)
class InplaceEdit:
    """An in-place modification of a name found in the source: `x.mul_(2)`, `x *= 2`, `x[0] = 1`."""

    line: int
    text: str
    out_of_place: str


def inplace_edits(source: SourceFile, scope: ast.AST, key: str, first: int, last: int) -> list[InplaceEdit]:
    """In-place modifications of `key` in lines [first, last] of `scope`, in source order."""
    found: list[InplaceEdit] = []
    for node in _walk_scope(scope):
        line = getattr(node, "lineno", 0)
        if not first <= line <= last:
            continue
        if isinstance(node, ast.AugAssign) and expression_key(node.target) == key:
            op = _AUG_OPS.get(type(node.op), "+")
            found.append(InplaceEdit(line, source.segment(node), f"{key} = {key} {op} {source.segment(node.value)}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method = node.func.attr
            if (
                method.endswith("_")
                and not method.startswith("_")
                and expression_key(node.func.value) == key
            ):
                args = ", ".join(source.segment(a) for a in node.args)
                found.append(InplaceEdit(line, source.segment(node), f"{key} = {key}.{method[:-1]}({args})"))
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Subscript) and expression_key(target.value) == key:
                    found.append(
                        InplaceEdit(line, source.segment(node), f"{key} = {key}.clone()\n{source.segment(node)}")
                    )
    found.sort(key=lambda e: e.line)
    return found


_AUG_OPS: dict[type, str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.MatMult: "@",
    ast.Pow: "**",
    ast.FloorDiv: "//",
    ast.Mod: "%",
}


def accumulations(scope: ast.AST, key: str) -> list[ast.stmt]:
    """Statements of `scope` that add to `key` from itself: `key += x` or `key = key + x`."""
    found: list[ast.stmt] = []
    for node in _walk_scope(scope):
        if isinstance(node, ast.AugAssign) and expression_key(node.target) == key or (
            isinstance(node, ast.Assign)
            and any(expression_key(t) == key for t in node.targets)
            and key in names_in(node.value)
        ):
            found.append(node)
    return found


def class_assignments(source: SourceFile, class_name: str, attribute: str) -> list[tuple[str, Assignment]]:
    """(method name, assignment) for every `self.<attribute> = ...` in the methods of `class_name`."""
    found: list[tuple[str, Assignment]] = []
    for node in ast.walk(source.tree):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.args.args:
                    receiver = item.args.args[0].arg
                    for assignment in assignments(item, f"{receiver}.{attribute}"):
                        found.append((item.name, assignment))
    return found


def accumulated_value(source: SourceFile, statement: ast.stmt, key: str) -> str | None:
    """What is added to `key` in `key += x` or `key = key + x` (the text of `x`)."""
    if isinstance(statement, ast.AugAssign):
        return source.segment(statement.value)
    value = getattr(statement, "value", None)
    if isinstance(value, ast.BinOp):
        if expression_key(value.left) == key:
            return source.segment(value.right)
        if expression_key(value.right) == key:
            return source.segment(value.left)
    return None


_ADDERS = frozenset(f.name for f in std_builtins.FACTS if f.receiver is Receiver.CONTAINER and f.stores is not None)


def _last(qualified: str) -> str:
    return qualified.rsplit(".", 1)[-1]


def container_additions(source: SourceFile) -> list[ast.Call]:
    """Every `x.append(...)`-style call in the file (list, deque and dict additions)."""
    return [
        node
        for node in ast.walk(source.tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _ADDERS
    ]


def conditions_within_loop(source: SourceFile, scope: ast.AST, row: int) -> tuple[list[str], set[str]]:
    """The tests of the `if`s around the statement at `row` inside the innermost loop around it (their
    text), and the names that loop binds (none when the statement is in no loop)."""
    statement = source.statement_at(scope, row)
    tests: list[str] = []
    if statement is None:
        return tests, set()
    for parent in source.ancestors(statement):
        if isinstance(parent, ast.If):
            tests.append(unparse(parent.test))
        if isinstance(parent, LOOPS):
            return tests, _bound_in(parent)
        if parent is scope:
            break
    return tests, set()


def branches_around(source: SourceFile, row: int) -> list[str]:
    """The branches the statement at `row` runs under in its function (`causes.branch_test`), `not (...)`
    for the `else` arm (or an `elif` further down)."""
    scope = source.function_at(row)
    statement = source.statement_at(scope, row)
    found: list[str] = []
    if statement is None:
        return found
    child: ast.AST = statement
    for parent in source.ancestors(statement):
        if parent is scope:
            break
        if isinstance(parent, ast.If):
            calls = any(isinstance(node, ast.Call) for node in ast.walk(parent.test))
            test = branch_test(unparse(parent.test), calls, parent.lineno)
            found.append(test if child in parent.body else f"not ({test})")
        child = parent
    return found


def _bound_in(loop: ast.AST) -> set[str]:
    """The plain names a loop (its target or body) binds, not inside functions it defines."""
    bound: set[str] = set()
    pending = [loop]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)) and node is not loop:
            bound.add(getattr(node, "name", ""))
            continue
        pending.extend(ast.iter_child_nodes(node))
    return bound


def method_calls_between(source: SourceFile, first: int, last: int) -> list[str]:
    """Names of the methods called (`obj.name(...)`) on lines strictly between `first` and `last`."""
    return [
        node.func.attr
        for node in ast.walk(source.tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and first < node.lineno < last
    ]
