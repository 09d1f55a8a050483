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
    conflict_closure,
    simple_definitions,
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
            edits, title = _recompute(facts, conflict)
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


def _recompute(facts: FileFacts, conflict: Conflict) -> tuple[list[Edit], str | None]:
    failing = conflict.failing.statement
    if failing is None:
        return [], None
    definitions = sorted(simple_definitions(conflict), key=lambda d: facts.span(d).start)
    function = conflict_closure(facts, conflict)
    if function is not None:
        # An optimizer closure (LBFGS) re-evaluated with a loss computed outside it: the
        # computation moves into the closure (or is repeated there, if it is used elsewhere too).
        chain = codemods.definition_chain(facts, definitions[0])
        lines = [line for d in chain for line in codemods.statement_text(facts, d, comments=True)]
        edits = [codemods.insert_before(facts, failing, lines)]
        if not _used_elsewhere(facts, chain, function):
            edits = [codemods.remove_statement(facts, d, comments=True) for d in chain] + edits
        return edits, "Compute `{root}` inside the closure, before its backward"
    if len(definitions) == 1:
        chain = codemods.definition_chain(facts, definitions[0])
        lines = [line for d in chain for line in codemods.statement_text(facts, d)]
        return [codemods.insert_before(facts, failing, lines)], \
            "Recompute `{root}` with a new forward pass before this backward"
    return [], "Recompute `{root}` with a new forward pass before this backward"


def _used_elsewhere(facts: FileFacts, chain: list[cst.CSTNode], closure: cst.FunctionDef) -> bool:
    """Whether what the chain assigns is used in its block after it, other than by the closure."""
    block = facts.parent(chain[-1])
    body = list(getattr(block, "body", ()))
    if chain[-1] not in body:
        return True
    names = set().union(*(codemods.assigned_names(d) for d in chain))
    later = [s for s in body[body.index(chain[-1]) + 1:] if s is not closure]
    return any(codemods.reads_name(s, name) for s in later for name in names)


def _is_expression_statement(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
        and isinstance(statement.body[0], cst.Expr)
