"""GG002: several losses of one forward pass, each with its own backward."""

from __future__ import annotations

import libcst as cst

from gradguard import causes as model
from gradguard import codemods
from gradguard.analysis import api
from gradguard.analysis.api import Receiver
from gradguard.analysis.facts import Cause, Conflict, FileFacts
from gradguard.model import Applicability, Edit
from gradguard.rules import ConflictRule, FixPlan


class SeparateBackwardSharedGraph(ConflictRule):
    """A second loss of the same forward pass is backward-ed after the first one freed the graph."""

    code = "GG002"
    causes = frozenset({Cause.SHARED_FORWARD})

    def fix(self, facts: FileFacts, conflict: Conflict, option: model.Option) -> FixPlan:
        if option.kind is model.FixKind.RETAIN_GRAPH:
            call = conflict.freed_by.node
            edits = [codemods.set_keyword(facts, call, "retain_graph", "True")] if isinstance(call, cst.Call) else []
            return FixPlan(tuple(edits), "Pass `retain_graph=True` to the earlier backward: the gradients read "
                           "in between show separate passes are wanted", Applicability.UNSAFE)
        if option.kind is not model.FixKind.SUM_LOSSES:
            return FixPlan(title="Run the forward again (or detach the shared input) before the second loss: "
                           "an optimizer stepped in between")
        edits, applicability = _fix(facts, conflict)
        return FixPlan(tuple(edits), applicability=applicability)


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
    if any(a.keyword is None or a.keyword.value != "retain_graph" for a in first_call.args):
        return [], None
    if facts.parent(first) is not facts.parent(second):
        return [], None
    first_root = first_call.func.value  # type: ignore[union-attr]
    second_root = second_call.func.value  # type: ignore[union-attr]
    summed = cst.parse_expression(f"({facts.code(first_root)} + {facts.code(second_root)})")
    new_call = second_call.with_changes(func=second_call.func.with_changes(value=summed))  # type: ignore[union-attr]
    block = facts.parent(first)
    adjacent = isinstance(block, cst.IndentedBlock) and _adjacent(block, first, second)
    edits = [codemods.remove_statement(facts, first), codemods.replace_node(facts, second_call, new_call)]
    return edits, Applicability.SAFE if adjacent else Applicability.UNSAFE


def _adjacent(block: cst.IndentedBlock, first: cst.CSTNode, second: cst.CSTNode) -> bool:
    body = list(block.body)
    return first in body and second in body and body.index(second) == body.index(first) + 1
