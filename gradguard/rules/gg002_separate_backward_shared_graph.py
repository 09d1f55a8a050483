"""GG002: several losses of one forward pass, each with its own backward."""

from __future__ import annotations

import libcst as cst

from gradguard import causes as model
from gradguard import codemods
from gradguard.analysis import api
from gradguard.analysis.api import Receiver
from gradguard.analysis.api.torch_tensor import RETAIN_GRAPH
from gradguard.analysis.facts import Cause, Conflict, FileFacts
from gradguard.analysis.values import Read
from gradguard.model import Applicability, Edit
from gradguard.rules import ConflictRule, FixPlan, into_closure, read_shape


class SeparateBackwardSharedGraph(ConflictRule):
    """A second loss of the same forward pass is backward-ed after the first one freed the graph."""

    code = "GG002"
    causes = frozenset({Cause.SHARED_FORWARD})

    def fix(self, facts: FileFacts, conflict: Conflict, option: model.Option) -> FixPlan:
        if option.kind is model.FixKind.RETAIN_GRAPH:
            call = conflict.freed_by.node
            edits = [codemods.set_keyword(facts, call, RETAIN_GRAPH, "True")] if isinstance(call, cst.Call) else []
            return FixPlan(tuple(edits), option.summary[:1].upper() + option.summary[1:], Applicability.UNSAFE)
        if option.kind is model.FixKind.DETACH:
            return _detach_later_reads(facts, conflict)
        if option.kind is model.FixKind.RECOMPUTE_IN_LOOP and not conflict.stepped:
            edits, title = _into_the_closure(facts, conflict)
            return FixPlan(tuple(edits), title)
        if option.kind is not model.FixKind.SUM_LOSSES:
            return FixPlan(title="Run the forward again (or detach the shared input) before the second loss: "
                           "an optimizer stepped in between")
        edits, applicability = _fix(facts, conflict)
        return FixPlan(tuple(edits), applicability=applicability)


def _into_the_closure(facts: FileFacts, conflict: Conflict) -> tuple[list[Edit], str | None]:
    """The shared forward, computed once beside an optimizer closure (LBFGS) that builds a new loss
    from it at each call, moved into the closure before the loss that reads it (kept where it was
    too when the code after the closure uses it)."""
    carrier, failing = conflict.carrier, conflict.failing.statement
    if carrier is None or failing is None or carrier.holder.kind != "variable":
        return [], None
    definitions = [d for d in carrier.assignments if isinstance(d, cst.SimpleStatementLine) and len(d.body) == 1
                   and isinstance(d.body[0], cst.Assign)]
    closure = codemods.enclosing_function(facts, failing)
    if len(definitions) != 1 or closure is None or codemods.inside(facts, definitions[0], closure) \
            or facts.parent(closure) is not facts.parent(definitions[0]):
        return [], None
    name = carrier.holder.text
    entry = next((s for s in getattr(closure.body, "body", ()) if codemods.reads_name(s, name)), None)
    if entry is None:
        return [], None
    return into_closure(facts, definitions[0], entry, closure), \
        "Compute `{carrier}` inside the closure, before the loss that reads it"


def _detach_later_reads(facts: FileFacts, conflict: Conflict) -> FixPlan:
    """The shared value detached where the later loss reads it (`advantage = td_target - value.detach()`):
    its modules were updated for this batch already and nothing steps them after the later loss."""
    assert conflict.carrier is not None
    edits = []
    seen: set[int] = set()
    for found in conflict.carrier.reads:
        read: Read | None = found
        while read is not None and not facts.is_local(read.expr):
            read = read.outer  # passed in by a call of this file (`critic(z)` into another module's forward)
        if read is None:
            return FixPlan()
        if id(read.expr) in seen:
            continue
        seen.add(id(read.expr))
        detached = codemods.detached_as(facts, read.expr, read_shape(facts, conflict, read))
        if detached is None:
            return FixPlan()
        edits.append(codemods.replace_node(facts, read.expr, detached))
    return FixPlan(tuple(edits), applicability=Applicability.UNSAFE)


def _backward_call(statement: cst.CSTNode | None) -> cst.Call | None:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        small = statement.body[0]
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            func = small.value.func
            method = api.method(func.attr.value, Receiver.TENSOR) if isinstance(func, cst.Attribute) else None
            if method is not None and method.backward is not None:
                return small.value
    return None


def _fix(facts: FileFacts, conflict: Conflict) -> tuple[list[Edit], Applicability | None]:
    first, second = conflict.freed_by.statement, conflict.failing.statement
    first_call, second_call = _backward_call(first), _backward_call(second)
    if first_call is None or second_call is None or conflict.stepped or first is None or second is None:
        return [], None
    if any(a.keyword is None or a.keyword.value != RETAIN_GRAPH for a in first_call.args):
        return [], None
    removed = first
    if facts.parent(first) is not facts.parent(second):
        # Each under its own `if` with the same test (`if log: a.backward()` ... `if log: b.backward()`):
        # both run or neither, so the sum goes under the second and the first `if` goes.
        guards = _same_guards(facts, first, second)
        if guards is None:
            return [], None
        removed = guards[0]
    first_root = first_call.func.value  # type: ignore[union-attr]
    second_root = second_call.func.value  # type: ignore[union-attr]
    summed = cst.parse_expression(f"({facts.code(first_root)} + {facts.code(second_root)})")
    new_call = second_call.with_changes(func=second_call.func.with_changes(value=summed))  # type: ignore[union-attr]
    block = facts.parent(first)
    adjacent = isinstance(block, cst.IndentedBlock) and _adjacent(block, first, second)
    edits = [codemods.remove_statement(facts, removed), codemods.replace_node(facts, second_call, new_call)]
    return edits, Applicability.SAFE if adjacent else Applicability.UNSAFE


def _sole_guard(facts: FileFacts, statement: cst.CSTNode) -> cst.If | None:
    """The `if` (without `else`) whose body is this statement alone."""
    block = facts.parent(statement)
    guard = facts.parent(block) if block is not None else None
    if isinstance(guard, cst.If) and guard.orelse is None and isinstance(block, cst.IndentedBlock) \
            and list(block.body) == [statement]:
        return guard
    return None


def _same_guards(facts: FileFacts, first: cst.CSTNode, second: cst.CSTNode) -> tuple[cst.If, cst.If] | None:
    """The `if`s around two statements when they have the same test, nothing between them rebinds
    what it reads, and they stand in one block."""
    first_guard, second_guard = _sole_guard(facts, first), _sole_guard(facts, second)
    if first_guard is None or second_guard is None or facts.parent(first_guard) is not facts.parent(second_guard):
        return None
    if facts.code(first_guard.test) != facts.code(second_guard.test):
        return None
    block = facts.parent(first_guard)
    body = list(getattr(block, "body", ()))
    if first_guard not in body or second_guard not in body:
        return None
    between = body[body.index(first_guard) + 1:body.index(second_guard)]
    read = codemods.read_names(first_guard.test)  # type: ignore[arg-type]
    if any(codemods.rebound_in(statement, read) for statement in between) or codemods.calls_in(first_guard.test):
        return None
    return first_guard, second_guard


def _adjacent(block: cst.IndentedBlock, first: cst.CSTNode, second: cst.CSTNode) -> bool:
    body = list(block.body)
    return first in body and second in body and body.index(second) == body.index(first) + 1
