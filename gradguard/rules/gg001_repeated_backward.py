"""GG001: the same graph is backward-ed again after a backward freed it."""

from __future__ import annotations

import libcst as cst

from gradguard import causes as model
from gradguard import codemods
from gradguard.analysis.api.torch_tensor import RETAIN_GRAPH
from gradguard.analysis.facts import CallKind, Cause, Conflict, FileFacts
from gradguard.model import Edit
from gradguard.rules import (
    ConflictRule,
    FixPlan,
    carrier_name,
    recompute_before,
)


class RepeatedBackward(ConflictRule):
    """A loss whose graph was freed by an earlier backward is backward-ed again."""

    code = "GG001"
    causes = frozenset({Cause.SAME_ROOT})
    # A backward repeated inside another module's code (a framework's loop backward()s what the
    # user's step already backward-ed): that code is right for every other caller; the cause is here.
    remote_fixes = False

    def fix(self, facts: FileFacts, conflict: Conflict, option: model.Option) -> FixPlan:
        if option.kind is model.FixKind.RETAIN_GRAPH:
            return FixPlan(tuple(_retain_earlier(facts, conflict)),
                           "Pass `retain_graph=True` to the earlier backward: the gradients read in between "
                           "show both passes are wanted")
        if conflict.remote_failing is not None:
            # Reported at this file's call of the code that fails (`Fitter().fit(model, data)`): that
            # statement is no backward, so neither removing it nor recomputing before it is the fix.
            return FixPlan()
        if option.kind is model.FixKind.RECOMPUTE_IN_LOOP:
            edits, title = recompute_before(facts, conflict)
            return FixPlan(tuple(edits), title)
        failing = conflict.failing.statement
        if failing is not None and conflict.failing.node is not conflict.freed_by.node \
                and _is_expression_statement(failing):
            return FixPlan((codemods.remove_statement(facts, failing),), "Remove the repeated backward call")
        return FixPlan()

    def fields(self, facts: FileFacts, conflict: Conflict) -> dict[str, str]:
        return {**super().fields(facts, conflict), "root": carrier_name(conflict)}


def _retain_earlier(facts: FileFacts, conflict: Conflict) -> list[Edit]:
    call = conflict.freed_by.node
    if not isinstance(call, cst.Call) or conflict.freed_by.kind not in (CallKind.BACKWARD, CallKind.GRAD):
        return []
    # In whichever module the earlier backward is (a gradient-norm helper of `metrics.py`).
    return [codemods.set_keyword(facts, call, RETAIN_GRAPH, "True")]


def _is_expression_statement(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
        and isinstance(statement.body[0], cst.Expr)
