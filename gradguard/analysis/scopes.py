"""Which names a scope binds in ways the interpreter follows: reading one that is not bound on the
path taken is a NameError (or UnboundLocalError), so that path is not one the program runs."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from gradguard.analysis.names import dotted
from gradguard.parse import walk


@dataclass(frozen=True)
class Bindings:
    """Where a scope binds its checked names: the order of each statement, and for each name the
    order of the first statement that assigns it."""

    order: dict[cst.CSTNode, int]
    first: dict[str, int]

    def unbound_read_fails(self, name: str, statement: cst.CSTNode | None) -> bool:
        """Reading `name` unbound in `statement` is a NameError the program would have met: the
        name is one of the scope's checked names, and an assignment of it comes earlier in the
        source (code that reads a name before any assignment of it is a fragment, not a path)."""
        first = self.first.get(name)
        if first is None or statement is None:
            return False
        at = self.order.get(statement)
        return at is not None and at > first


def checked_locals(scope: cst.Module | cst.FunctionDef) -> Bindings:
    """Names the scope binds only by assignment, `for`, `with ... as` or `:=`, never by an import,
    a `global`/`nonlocal` declaration, a `match` capture or anything else the interpreter does not
    bind: an unbound read of one of them is sure to fail."""
    collector = _Bindings()
    body = scope.body if isinstance(scope, cst.Module) else scope.body.body
    for statement in body:
        walk(statement, collector)
    if isinstance(scope, cst.FunctionDef):
        params = scope.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            collector.other.add(param.name.value)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                collector.other.add(star.name.value)
    if "*" in collector.other:
        return Bindings(collector.order, {})
    first = {name: index for name, index in collector.assigned.items() if name not in collector.other}
    return Bindings(collector.order, first)


class _Bindings(cst.CSTVisitor):
    def __init__(self) -> None:
        self.assigned: dict[str, int] = {}
        self.other: set[str] = set()
        self.order: dict[cst.CSTNode, int] = {}
        self.stack: list[int] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.BaseStatement):
            self.order[node] = len(self.order)
            self.stack.append(self.order[node])
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if isinstance(original_node, cst.BaseStatement):
            self.stack.pop()
        super().on_leave(original_node)

    def _bind(self, name: str) -> None:
        if name not in self.assigned and self.stack:
            self.assigned[name] = self.stack[-1]

    def _targets(self, target: cst.BaseExpression, into: set[str] | None) -> None:
        if isinstance(target, cst.Name):
            if into is None:
                self._bind(target.value)
            else:
                into.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._targets(element.value, into)
        elif isinstance(target, cst.StarredElement):
            self._targets(target.value, into)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._targets(target.target, None)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._targets(node.target, None if node.value is not None else self.other)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._targets(node.target, None)

    def visit_For(self, node: cst.For) -> None:
        self._targets(node.target, None)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._targets(node.asname.name, None)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._targets(node.target, None)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._targets(node.name.name, self.other)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            if alias.asname is not None:
                self._targets(alias.asname.name, self.other)  # type: ignore[arg-type]
            else:
                head = alias.name
                while isinstance(head, cst.Attribute):
                    head = head.value
                self._targets(head, self.other)  # type: ignore[arg-type]

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            self.other.add("*")
            return
        for alias in node.names:
            name = alias.asname.name if alias.asname is not None else alias.name
            self._targets(name, self.other)  # type: ignore[arg-type]

    def visit_Global(self, node: cst.Global) -> None:
        self.other.update(n.name.value for n in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.other.update(n.name.value for n in node.names)

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self.other.add(node.name.value)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self.other.add(node.name.value)

    def visit_MatchMapping(self, node: cst.MatchMapping) -> None:
        if node.rest is not None:
            self.other.add(node.rest.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.other.add(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.other.add(node.name.value)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def _comprehension(self, node: cst.CSTNode) -> bool:
        # Its variables live in its own scope; a `:=` inside it is rare enough to leave alone.
        return False

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension  # type: ignore[assignment]


def assigned_in(node: cst.CSTNode) -> frozenset[str]:
    """Every name and attribute chain a statement (a loop, with its target) assigns anywhere in it."""
    found: set[str] = set()

    def targets(target: cst.BaseExpression) -> None:
        text = dotted(target)
        if text is not None:
            found.add(text)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                targets(element.value)
        elif isinstance(target, (cst.StarredElement, cst.Subscript)):
            targets(target.value)

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, n: cst.Assign) -> None:
            for t in n.targets:
                targets(t.target)

        def visit_AugAssign(self, n: cst.AugAssign) -> None:
            targets(n.target)

        def visit_AnnAssign(self, n: cst.AnnAssign) -> None:
            targets(n.target)

        def visit_For(self, n: cst.For) -> None:
            targets(n.target)

        def visit_NamedExpr(self, n: cst.NamedExpr) -> None:
            targets(n.target)

        def visit_WithItem(self, n: cst.WithItem) -> None:
            if n.asname is not None:
                targets(n.asname.name)

    walk(node, Finder())
    return frozenset(found)


Guard = tuple[cst.BaseExpression, bool]


@dataclass(frozen=True)
class Placement:
    """Where each statement of a scope sits: the `if` arms around it (each test with the truth its
    arm needs; an `elif` arm also needs the tests before it false) and the loops around it."""

    guards: dict[cst.CSTNode, tuple[Guard, ...]]
    loops: dict[cst.CSTNode, tuple[cst.CSTNode, ...]]


def placement(scope: cst.Module | cst.FunctionDef) -> Placement:
    """The `if` arms and loops around every statement of `scope` (nested scopes excluded)."""
    guards: dict[cst.CSTNode, tuple[Guard, ...]] = {}
    loops: dict[cst.CSTNode, tuple[cst.CSTNode, ...]] = {}

    def block(body: cst.CSTNode | None, arms: tuple[Guard, ...], around: tuple[cst.CSTNode, ...]) -> None:
        if body is None:
            return
        for statement in getattr(body, "body", ()):
            place(statement, arms, around)

    def place(statement: cst.CSTNode, arms: tuple[Guard, ...], around: tuple[cst.CSTNode, ...]) -> None:
        guards[statement] = arms
        loops[statement] = around
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            return
        if isinstance(statement, cst.If):
            block(statement.body, (*arms, (statement.test, True)), around)
            otherwise = (*arms, (statement.test, False))
            if isinstance(statement.orelse, cst.If):
                place(statement.orelse, otherwise, around)
            elif statement.orelse is not None:
                block(statement.orelse.body, otherwise, around)
            return
        if isinstance(statement, (cst.For, cst.While)):
            block(statement.body, arms, (*around, statement))
            if statement.orelse is not None:
                block(statement.orelse.body, arms, around)
            return
        if isinstance(statement, cst.Try):
            block(statement.body, arms, around)
            for handler in statement.handlers:
                block(handler.body, arms, around)
            for extra in (statement.orelse, statement.finalbody):
                if extra is not None:
                    block(extra.body, arms, around)
            return
        if isinstance(statement, cst.Match):
            for case in statement.cases:
                block(case.body, arms, around)
            return
        if hasattr(statement, "body") and not isinstance(statement, cst.SimpleStatementLine):
            block(statement.body, arms, around)

    if isinstance(scope, cst.Module):
        for statement in scope.body:
            place(statement, (), ())
    else:
        block(scope.body, (), ())
    return Placement(guards, loops)


def slots_of_counter(body: cst.BaseSuite, counter: str) -> frozenset[str]:
    """The names a loop body uses only as `name[counter]` (read or written), when the body never
    assigns `counter` itself: a list written at the loop's counter is written at a new index each
    iteration, so its slot at the counter holds what it held before the loop until this iteration
    writes it (`losses[i] = ...` under a condition, read back as `losses[i]`)."""
    if counter in assigned_in(body):
        return frozenset()
    slotted: dict[str, int] = {}
    named: dict[str, int] = {}

    class Finder(cst.CSTVisitor):
        def visit_Subscript(self, node: cst.Subscript) -> None:
            if isinstance(node.value, cst.Name) and len(node.slice) == 1 \
                    and isinstance(node.slice[0].slice, cst.Index) \
                    and isinstance(node.slice[0].slice.value, cst.Name) \
                    and node.slice[0].slice.value.value == counter:
                slotted[node.value.value] = slotted.get(node.value.value, 0) + 1

        def visit_Name(self, node: cst.Name) -> None:
            named[node.value] = named.get(node.value, 0) + 1

    walk(body, Finder())
    return frozenset(name for name, count in slotted.items() if named.get(name) == count and name != counter)
