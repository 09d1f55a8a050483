"""The part of a script an edit can change the findings of: top-level helpers that cannot reach a
backward are left out, so that the language server re-analyses a long script in a fraction of the time.

A top-level function is kept when anything could make it matter to the analysis: it calls backward or
grad (the same screen the lint runs), it gives the screen evidence of a module (`net.eval()`), it holds a
`noqa` directive, it is decorated, it names something that might run a backward (a class or method of
the file, a name bound at module level, an import of anything but the standard library, torch and
numpy, another kept helper), or kept code names it (by name, attribute or string). Everything else is a
helper no kept code calls and that calls nothing that backward-s: analysed on its own, or not at all, it
yields nothing. The excerpt keeps every other line as it is; `Excerpt.rows` gives each of its rows' row
in the file, which the engine maps findings back through (columns are unchanged).

The server still runs the whole file's analysis in a worker process and publishes that result when it
differs (`lsp.py`), so an editor ends with exactly what `gradguard lint` reports.
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
from collections.abc import Iterable
from dataclasses import dataclass

# Imports whose names cannot lead to a backward the screen does not already see in the helper's text:
# the standard library, and torch/numpy (torch's backward and grad functions are what the screen looks for).
_INERT_PACKAGES = frozenset(sys.stdlib_module_names) | {"torch", "numpy", "__future__"}

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_WORD = re.compile(r"[^\W\d]\w*")
_LINE = re.compile(r".*?(?:\r\n|\r|\n|$)", re.DOTALL)  # the line breaks Python counts rows by


@dataclass(frozen=True)
class Excerpt:
    """A script with helpers left out: its text, and the file's row of each of its rows (1-based)."""

    text: str
    rows: tuple[int, ...]


def _identifiers(text: str) -> set[str]:
    """Every word of a piece of code that could be a name: a superset (comments and strings included)."""
    return set(_WORD.findall(text))


def _module_bindings(tree: ast.Module) -> tuple[set[str], set[str]]:
    """(names bound at module level or in a class, functions included; names bound by imports of inert
    packages only)."""
    bound: set[str] = set()
    inert: set[str] = set()
    risky_imports: set[str] = set()

    def visit(node: ast.AST, in_class: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _FUNCTIONS):
                bound.add(child.name)
                continue  # its locals are not globals
            if isinstance(child, ast.Lambda):
                continue
            if isinstance(child, ast.ClassDef):
                bound.add(child.name)
                visit(child, True)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                module = child.module if isinstance(child, ast.ImportFrom) else None
                for alias in child.names:
                    source = module if module is not None else alias.name
                    name = alias.asname or alias.name.split(".")[0]
                    top = (source or "").split(".")[0]
                    if isinstance(child, ast.ImportFrom) and child.level:
                        top = ""  # a relative import is the project's own
                    (inert if top in _INERT_PACKAGES else risky_imports).add(name)
                continue
            if isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
                bound.add(child.id)
            visit(child, in_class)

    visit(tree, False)
    return bound | risky_imports, inert - risky_imports - bound


def _segment(lines: list[str], node: ast.stmt) -> str:
    """A statement's lines, with its decorators and its comments on those lines."""
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
    return "".join(lines[first - 1 : node.end_lineno])


def focus(source: str) -> Excerpt | None:
    """`source` without the top-level functions that cannot matter, or None when none can be left out."""
    from gradguard.analysis import might_hold_finding
    from gradguard.analysis.knowledge import MODULE_EVIDENCE_METHODS

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = [line for line in _LINE.findall(source) if line]
    # A call such as `net.eval()` anywhere makes the screen treat `net` as a module everywhere.
    evidence = re.compile(r"\.(?:" + "|".join(sorted(MODULE_EVIDENCE_METHODS)) + r")\s*\(")
    texts = {index: _segment(lines, statement) for index, statement in enumerate(tree.body)}
    candidates = {
        index: statement
        for index, statement in enumerate(tree.body)
        if isinstance(statement, _FUNCTIONS)
        and not statement.decorator_list
        and "noqa" not in texts[index].lower()
        and not might_hold_finding(texts[index])
        and not evidence.search(texts[index])
    }
    dropped = _unreachable(tree, texts, candidates)
    return _without(lines, dropped) if dropped else None


def _unreachable(
    tree: ast.Module, texts: dict[int, str], candidates: dict[int, ast.FunctionDef | ast.AsyncFunctionDef]
) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The candidates no kept code names and that name nothing that might run a backward."""
    candidates = dict(candidates)
    used = _identifiers("".join(text for index, text in texts.items() if index not in candidates))
    bound, inert = _module_bindings(tree)
    reaching = bound - inert - {f.name for f in candidates.values()}
    mentions = {index: _identifiers(texts[index]) - {function.name} for index, function in candidates.items()}
    changed = True
    while changed:  # to a fixed point: each helper kept may name, or be named by, another
        changed = False
        for index in list(candidates):
            function = candidates[index]
            if function.name in used or mentions[index] & reaching:
                del candidates[index]
                used |= mentions[index]
                reaching.add(function.name)
                changed = True
    # Two definitions of one name: which one kept code reaches is not known here.
    names = [f.name for f in candidates.values()]
    return [f for f in candidates.values() if names.count(f.name) == 1]


def _without(lines: list[str], functions: Iterable[ast.FunctionDef | ast.AsyncFunctionDef]) -> Excerpt:
    """The text without the functions' lines, and the file row of each row left."""
    left_out: set[int] = set()
    for function in functions:
        left_out.update(range(function.lineno, (function.end_lineno or function.lineno) + 1))
    rows = tuple(row for row in range(1, len(lines) + 1) if row not in left_out)
    return Excerpt("".join(lines[row - 1] for row in rows), rows)
