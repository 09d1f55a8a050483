"""Checks a fix must pass before it is offered: its text parses, it leaves no name unbound where it is
used, its finding disappears on re-analysis without a new one appearing.

The rules ask `refusal` for every fix they build (`gradguard.rules.Rule.report`): the fix is applied
alone to the analysed text, which is analysed again, with the checks themselves switched off in that
nested analysis. A fix that fails keeps its finding, with the fix described in words (`by_hand`).
The scope check compares the suspicious name uses of the program before and after the fix, so code that
already relied on late binding (a name set later in a loop behind a flag) is not held against a fix.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider, ScopeProvider
from libcst.metadata.scope_provider import (
    Access,
    BuiltinAssignment,
    ClassScope,
    ComprehensionScope,
    FunctionScope,
    GlobalScope,
    Scope,
)

from gradguard.analysis import Analysis
from gradguard.model import Diagnostic, Edit, Severity

# True inside the analysis of a fix's result, whose own fixes need no checking.
_CHECKING: ContextVar[bool] = ContextVar("gradguard_checking_a_fix", default=False)


def checking() -> bool:
    """Whether the current analysis is the re-analysis of a fix being checked."""
    return _CHECKING.get()


@contextmanager
def unchecked() -> Iterator[None]:
    """Within it, rules offer their fixes without checking them (the re-analysis of a fix)."""
    token = _CHECKING.set(True)
    try:
        yield
    finally:
        _CHECKING.reset(token)


def plain_findings(source: str, path: str | None = None) -> tuple[Diagnostic, ...]:
    """Every rule's findings for a text, their fixes unchecked (raises `ParseFailure`). With the
    file's `path`, the project modules it imports are read as in the analysis being checked."""
    return plain_analysis(source, path).diagnostics


def plain_analysis(source: str, path: str | None = None) -> Analysis:
    """`plain_findings` with what the analysis depends on and left incomplete (cached: the check of
    a fix analyses the fixed text, which the next round of `--fix` analyses again), the project modules
    read as the overlay in force says (the modules a fix being checked edits)."""
    from gradguard.analysis.project import overlay

    return _plain_analysis(source, path, overlay())


@lru_cache(maxsize=32)
def _plain_analysis(source: str, path: str | None, texts: tuple[tuple[str, str], ...]) -> Analysis:
    from gradguard.analysis import analyze_file

    with unchecked():
        return analyze_file(source, path=path)


@contextmanager
def fix_session() -> Iterator[None]:
    """Within it (one `--fix` of one file), an analysis of a text a fix check already analysed takes
    that analysis and only checks its fixes; outside, every analysis reads the project afresh."""
    token = _SESSION.set(True)
    try:
        yield
    finally:
        _SESSION.reset(token)


def in_fix_session() -> bool:
    """Whether analyses may reuse those of the fix checks (see `fix_session`)."""
    return _SESSION.get()


_SESSION: ContextVar[bool] = ContextVar("gradguard_fix_session", default=False)


# Each check is one re-analysis of the file; past this many in one file, fixes are withheld.
MAX_REANALYSES = 8


def checked(source: str, diagnostics: Iterable[Diagnostic], path: str | None = None) -> tuple[Diagnostic, ...]:
    """The findings of one analysis of `source`, each fix either offered (it passed the checks) or
    withheld with the reason in words.

    The fixes are checked together first: applied at once they must parse, bind every name and, on
    one re-analysis, lose every fixed finding and gain none they bring about. A group that fails is
    split in halves and each half checked again, so a file with many sound fixes costs one
    re-analysis and each bad fix costs a few, never one per finding.
    """
    found = list(diagnostics)
    fixable = [index for index, diagnostic in enumerate(found) if diagnostic.fix is not None]
    if not fixable:
        return tuple(found)
    budget = [MAX_REANALYSES]
    # The names the program already reads where they are unbound: a full scope analysis of the file,
    # needed only when a fix's re-analysis shows a new finding (scope_problems caches it).
    broken = lambda: set(scope_problems(source))  # noqa: E731
    reasons: dict[int, str] = {}
    _check_group(source, found, fixable, broken, budget, reasons, path)
    return tuple(by_hand(d, reasons[i]) if i in reasons else d for i, d in enumerate(found))


def _check_group(source: str, found: list[Diagnostic], group: list[int], broken: Callable[[], set[str]],
                 budget: list[int], reasons: dict[int, str], path: str | None) -> None:
    if budget[0] <= 0:
        for index in group:
            reasons[index] = f"only {MAX_REANALYSES} checks of a file's fixes are made (run --fix again)"
        return
    budget[0] -= 1
    reason = _group_problem(source, [found[index] for index in group], found, broken, path)
    if reason is None:
        return
    if len(group) == 1:
        reasons[group[0]] = reason
        return
    middle = len(group) // 2
    _check_group(source, found, group[:middle], broken, budget, reasons, path)
    _check_group(source, found, group[middle:], broken, budget, reasons, path)


def _group_problem(source: str, group: list[Diagnostic], before: list[Diagnostic],
                   broken: Callable[[], set[str]], path: str | None = None) -> str | None:
    from gradguard.analysis.project import overlaid
    from gradguard.fixes import fix_text_round, module_text
    from gradguard.parse import ParseFailure

    fixes = [diagnostic.fix for diagnostic in group if diagnostic.fix is not None]
    others: dict[str, str] = {}
    fixed, applied = fix_text_round(source, fixes, others if path is not None else None)
    if applied < len(fixes) or (fixed == source and not others):
        return "its edits could not be applied" if len(fixes) == 1 else "the edits overlap"
    originals = {other: module_text(other) or "" for other in others}
    try:
        for text in others.values():
            cst.parse_module(text)
        with overlaid(others):
            fixed_analysis = plain_analysis(fixed, path)
            after = fixed_analysis.diagnostics
    except (cst.ParserSyntaxError, ParseFailure) as exc:
        return f"the fixed code does not parse ({getattr(exc, 'message', exc)})"
    except Exception as exc:  # noqa: BLE001 - a fix the analysis cannot check is not offered
        return f"the fixed code could not be analysed again ({type(exc).__name__})"
    unbound = new_scope_problems(source, fixed)
    for other, text in others.items():
        unbound += new_scope_problems(originals[other], text)
    if unbound:
        return "it would use " + ", ".join(f"`{name}`" for name in unbound) + " where no value is bound to it"
    graphless = _new_graphless_backward(source, path, fixed_analysis)
    if graphless is not None:
        return (f"the backward at line {graphless} would then run on a tensor that does not require grad "
                "(nothing would train)")
    return reanalysis_problem(group, before, after, broken=broken)


def _new_graphless_backward(source: str, path: str | None, fixed: Analysis) -> int | None:
    """A row of the fixed text where a backward runs on a tensor known to carry no graph, when the
    fix brought one about (`with torch.no_grad():` around the only write the loss goes through)."""
    if not fixed.graphless_backwards:
        return None
    try:
        original = plain_analysis(source, path)
    except Exception:  # noqa: BLE001 - the text was analysed before the fix; nothing to compare then
        return None
    if len(fixed.graphless_backwards) <= len(original.graphless_backwards):
        return None
    return fixed.graphless_backwards[0]


def refusal(source: str, diagnostic: Diagnostic, before: Iterable[Diagnostic] | None = None) -> str | None:
    """Why the fix of one finding of `source` must not be offered, or None when it passes (the check
    `checked` makes for a group of one). `before` are the findings of `source` when known."""
    if diagnostic.fix is None:
        return None
    try:
        known = list(plain_findings(source) if before is None else before)
    except Exception as exc:  # noqa: BLE001
        return f"the code could not be analysed ({type(exc).__name__})"
    return _group_problem(source, [diagnostic], known, lambda: set(scope_problems(source)))

_BUILTINS = frozenset(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__", "__builtins__",
                                        "__loader__", "__package__", "__path__", "get_ipython", "display"}


@lru_cache(maxsize=64)
def scope_problems(source: str) -> Counter[str]:
    """Names read where no binding can reach them (a use before every assignment of its own scope, or
    a name bound in no scope around it), counted per name (`<syntax>` for text that does not parse).
    Cached: do not modify the result."""
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        return Counter({"<syntax>": 1})
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    scopes = wrapper.resolve(ScopeProvider)
    positions = wrapper.resolve(PositionProvider)
    found: Counter[str] = Counter()
    seen: set[int] = set()
    for scope in scopes.values():
        if scope is None or id(scope) in seen:
            continue
        seen.add(id(scope))
        for access in scope.accesses:
            name = _access_name(access)
            if name is None or name in _BUILTINS or not _unbound(access, scope, positions):
                continue
            found[name] += 1
    return found


def _access_name(access: Access) -> str | None:
    node = access.node
    return node.value if isinstance(node, cst.Name) else None


def _position(positions: object, node: cst.CSTNode) -> tuple[int, int] | None:
    found = positions.get(node)  # type: ignore[attr-defined]
    return (found.start.line, found.start.column) if found is not None else None


def _unbound(access: Access, scope: Scope, positions: object) -> bool:
    """No assignment reaches the access: none at all, or, in the access's own function or module
    scope, only ones that come after it in the text."""
    referents = [r for r in access.referents if not isinstance(r, BuiltinAssignment)]
    if not referents:
        return not any(isinstance(r, BuiltinAssignment) for r in access.referents) \
            and not _declared_elsewhere(scope, access)
    if isinstance(scope, (ClassScope, ComprehensionScope)):
        return False
    if not isinstance(scope, (FunctionScope, GlobalScope)):
        return False
    own = [r for r in referents if getattr(r, "scope", None) is scope]
    if len(own) != len(referents):
        return False  # bound in an enclosing scope: looked up when the function runs
    used_at = _position(positions, access.node)
    if used_at is None:
        return False
    for referent in own:
        node = getattr(referent, "node", None)
        at = _position(positions, node) if isinstance(node, cst.CSTNode) else None
        if at is None or at <= used_at:
            return False
    return True


def _declared_elsewhere(scope: Scope, access: Access) -> bool:
    """`from x import *` makes every unknown name possibly bound."""
    name = _access_name(access)
    if name is None:
        return True
    current: Scope | None = scope
    while current is not None:
        if "*" in current:
            return True
        parent = getattr(current, "parent", None)
        current = parent if parent is not current else None
    return False


def new_scope_problems(before: str, after: str) -> list[str]:
    """The names a fix leaves unbound that were not unbound before it."""
    before, after = _skeletons(before, after)
    grown = scope_problems(after) - scope_problems(before)
    return sorted(grown)


def _skeletons(before: str, after: str) -> tuple[str, str]:
    """Both texts with the bodies of the functions and methods that a fix left as they were reduced to
    `pass`, where that cannot change what the comparison finds: a body reads module-level names when it
    runs (their order does not matter) and builtins, and the fix bound the same module-level names, so its
    unbound names are the same on both sides and cancel. Headers, decorators and class bodies, which run
    where they stand, stay. The scope analysis, the check's largest cost on a long script, then runs on
    what the fix changed and the module-level code around it."""
    try:
        trees = ast.parse(before), ast.parse(after)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return before, after
    if _global_bindings(trees[0]) != _global_bindings(trees[1]):
        return before, after
    texts = (before.splitlines(keepends=True), after.splitlines(keepends=True))
    definitions = [{_definition_text(lines, node): node for node in tree.body
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
                   for tree, lines in zip(trees, texts, strict=True)]
    same = definitions[0].keys() & definitions[1].keys()
    if not same:
        return before, after
    return (_stubbed(texts[0], [definitions[0][text] for text in same]),
            _stubbed(texts[1], [definitions[1][text] for text in same]))


def _definition_text(lines: list[str], node: ast.stmt) -> str:
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
    return "".join(lines[first - 1:node.end_lineno])


def _stubbed(lines: list[str], nodes: list[ast.stmt]) -> str:
    """The text with the body of each function among `nodes`, and of each method of a class among them,
    replaced by `pass` (a body that starts on its header's line stays)."""
    bodies: list[tuple[int, int, str]] = []
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ClassDef):
            stack.extend(n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
            continue
        first = node.body[0]  # type: ignore[attr-defined]
        line = lines[first.lineno - 1]
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        if first.lineno > node.lineno and len(indent) == first.col_offset:
            bodies.append((first.lineno, node.end_lineno or first.lineno, indent))
    out = list(lines)
    for start, end, indent in sorted(bodies, reverse=True):
        out[start - 1:end] = [f"{indent}pass\n"]
    return "".join(out)


def _global_bindings(tree: ast.Module) -> frozenset[str]:
    """The names bound in a module's global scope: by its own statements (loops, conditions and `with`
    included, comprehension variables not), by `global` declarations anywhere, and `*` for a star import."""
    found = {name for node in ast.walk(tree) if isinstance(node, ast.Global) for name in node.names}
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)  # its body binds in a scope of its own
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            found.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            found.add(node.rest)
        if isinstance(node, ast.comprehension):
            stack.extend((node.iter, *node.ifs))  # its variable is the comprehension's own
            continue
        stack.extend(ast.iter_child_nodes(node))
    return frozenset(found)


def _carrier(diagnostic: Diagnostic) -> str:
    """The carrier a finding names (its first quoted code), "" when it names none."""
    match = _QUOTED.search(diagnostic.message)
    return match.group(1) if match else ""


_QUOTED = re.compile(r"`([^`]+)`")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def reanalysis_problem(fixed: Diagnostic | Iterable[Diagnostic], before: Iterable[Diagnostic],
                       after: Iterable[Diagnostic], broken: Callable[[], set[str]] | None = None) -> str | None:
    """Why the findings after a fix (or a group of fixes applied together) do not show it worked.

    Findings are matched by rule and carrier, since the fix moves the rows of those below it. The
    fixed finding must be gone. A finding that was not there before counts against the fix when the
    fix's edits name its carrier (the fix made that value stale); one about a value the fix does not
    touch was hidden behind the fixed bug (the first backward failed before reaching it) and is left
    to its own fix. So is one about a name the program already reads where it is unbound (`broken`):
    that program fails whatever the fix does.
    """
    group = [fixed] if isinstance(fixed, Diagnostic) else list(fixed)
    expected = Counter((d.code, _carrier(d)) for d in before)
    owns = Counter((d.code, _carrier(d)) for d in group)
    expected.subtract(owns)
    found = Counter((d.code, _carrier(d)) for d in after)
    for own in owns:
        if found[own] > max(expected[own], 0):
            return f"the {own[0]} finding is still reported after the fix"
    edits = [edit for d in group for edit in (d.fix.edits if d.fix else ())]
    touched = {name for edit in edits for name in _IDENTIFIER.findall(edit.content)}
    for (code, carrier), count in sorted(found.items()):
        if count > max(expected[(code, carrier)], 0):
            names = set(_IDENTIFIER.findall(carrier))
            if broken is not None and names & broken():
                continue
            if not names or names & touched:
                return f"the fix introduces a new {code} finding"
    # The same call failing again, now for a value the fix moved (a read moved into the loop that
    # still hands out the stale graph), under another rule's name: the fix did not work.
    fixed_rows = {_moved_row(d.span.start.row, edits) for d in group}
    new = [d for d in after if d.severity is Severity.ERROR and d.span.start.row in fixed_rows
           and found[(d.code, _carrier(d))] > max(expected[(d.code, _carrier(d))], 0)]
    for diagnostic in new:
        names = {n for quoted in _QUOTED.findall(diagnostic.message) for n in _IDENTIFIER.findall(quoted)}
        if names & touched and not (broken is not None and names & broken()):
            return f"the call still fails after the fix ({diagnostic.code})"
    return None


def _moved_row(row: int, edits: list[Edit]) -> int:
    """Where `row` is once `edits` are applied (rows added or removed above it move it)."""
    moved = row
    for edit in edits:
        if edit.path is None and edit.span.end.row <= row and (edit.span.end.row < row or edit.span.end.column == 1):
            moved += edit.content.count("\n") - (edit.span.end.row - edit.span.start.row)
    return moved


def by_hand(diagnostic: Diagnostic, reason: str) -> Diagnostic:
    """The finding with its fix withheld: the fix's title stays in the message, as what to do by hand."""
    from dataclasses import replace

    if diagnostic.fix is None:
        return diagnostic
    title = diagnostic.fix.message.rstrip(".")
    message = f"{diagnostic.message} (fix by hand: {title}; the automatic fix was withheld because {reason})"
    return replace(diagnostic, fix=None, message=message)
