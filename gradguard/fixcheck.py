"""Checks a fix must pass before it is offered: its text parses, it leaves no name unbound where it is
used, its finding disappears on re-analysis without a new one appearing.

The rules ask `refusal` for every fix they build (`gradguard.rules.Rule.report`): the fix is applied
alone to the analysed text, which is analysed again, with the checks themselves switched off in that
nested analysis. A fix that fails keeps its finding, with the fix described in words (`by_hand`).
The scope check compares the suspicious name uses of the program before and after the fix, so code that
already relied on late binding (a name set later in a loop behind a flag) is not held against a fix.
"""

from __future__ import annotations

import builtins
import re
from collections import Counter
from collections.abc import Iterable, Iterator
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

from gradguard.model import Diagnostic, Fix

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


@lru_cache(maxsize=32)
def plain_findings(source: str) -> tuple[Diagnostic, ...]:
    """Every rule's findings for a text, their fixes unchecked (raises `ParseFailure`)."""
    from gradguard.analysis import analyze

    with unchecked():
        return analyze(source)


MAX_CHECKED_FIXES = 12


def refusal(source: str, diagnostic: Diagnostic, before: Iterable[Diagnostic] | None = None,
            checked: list[int] | None = None) -> str | None:
    """Why the fix of a finding of `source` must not be offered, or None when it passes: applied alone
    it must give text that parses, binds every name it uses, and on re-analysis loses the finding and
    gains none that the fix brought about. `before` are the findings of `source` when known;
    `checked` counts the fixes this analysis of the file already checked."""
    from gradguard.fixes import fix_text_round
    from gradguard.parse import ParseFailure

    fix: Fix | None = diagnostic.fix
    if fix is None:
        return None
    checked = [0] if checked is None else checked
    checked[0] += 1
    if checked[0] > MAX_CHECKED_FIXES:
        # Each check is a re-analysis of the file: past this many, a fix is withheld, not unchecked.
        return f"only the first {MAX_CHECKED_FIXES} fixes of a file are checked (run --fix again)"
    fixed, applied = fix_text_round(source, [fix])
    if applied == 0 or fixed == source:
        return "its edits could not be applied"
    try:
        after = plain_findings(fixed)
        before = plain_findings(source) if before is None else before
    except (cst.ParserSyntaxError, ParseFailure) as exc:
        return f"the fixed code does not parse ({getattr(exc, 'message', exc)})"
    except Exception as exc:  # noqa: BLE001 - a fix the analysis cannot check is not offered
        return f"the fixed code could not be analysed again ({type(exc).__name__})"
    unbound = new_scope_problems(source, fixed)
    if unbound:
        return "it would use " + ", ".join(f"`{name}`" for name in unbound) + " where no value is bound to it"
    return reanalysis_problem(diagnostic, before, after, broken=set(scope_problems(source)))

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
    grown = scope_problems(after) - scope_problems(before)
    return sorted(grown)


def _carrier(diagnostic: Diagnostic) -> str:
    """The carrier a finding names (its first quoted code), "" when it names none."""
    match = _QUOTED.search(diagnostic.message)
    return match.group(1) if match else ""


_QUOTED = re.compile(r"`([^`]+)`")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def reanalysis_problem(fixed: Diagnostic, before: Iterable[Diagnostic], after: Iterable[Diagnostic],
                       broken: set[str] | None = None) -> str | None:
    """Why the findings after a fix do not show it worked, or None.

    Findings are matched by rule and carrier, since the fix moves the rows of those below it. The
    fixed finding must be gone. A finding that was not there before counts against the fix when the
    fix's edits name its carrier (the fix made that value stale); one about a value the fix does not
    touch was hidden behind the fixed bug (the first backward failed before reaching it) and is left
    to its own fix. So is one about a name the program already reads where it is unbound (`broken`):
    that program fails whatever the fix does.
    """
    expected = Counter((d.code, _carrier(d)) for d in before)
    own = (fixed.code, _carrier(fixed))
    expected[own] -= 1
    found = Counter((d.code, _carrier(d)) for d in after)
    if found[own] > max(expected[own], 0):
        return f"the {fixed.code} finding is still reported after the fix"
    touched = {name for edit in (fixed.fix.edits if fixed.fix else ()) for name in _IDENTIFIER.findall(edit.content)}
    for (code, carrier), count in sorted(found.items()):
        if count > max(expected[(code, carrier)], 0):
            names = set(_IDENTIFIER.findall(carrier))
            if names & (broken or set()):
                continue
            if not names or names & touched:
                return f"the fix introduces a new {code} finding"
    return None


def by_hand(diagnostic: Diagnostic, reason: str) -> Diagnostic:
    """The finding with its fix withheld: the fix's title stays in the message, as what to do by hand."""
    from dataclasses import replace

    if diagnostic.fix is None:
        return diagnostic
    title = diagnostic.fix.message.rstrip(".")
    message = f"{diagnostic.message} (fix by hand: {title}; the automatic fix was withheld because {reason})"
    return replace(diagnostic, fix=None, message=message)
