"""GG011: a backward goes through a retained graph whose saved parameters an optimizer step changed."""

from __future__ import annotations

import libcst as cst

from gradguard import causes as model
from gradguard import codemods
from gradguard.analysis.facts import Cause, Conflict, FileFacts
from gradguard.model import Edit
from gradguard.rules import ConflictRule, FixPlan


class BackwardAfterOptimizerStep(ConflictRule):
    """A graph kept with `retain_graph=True` is backward-ed again after an optimizer step updated,
    in place, the parameters it saved."""

    code = "GG011"
    causes = frozenset({Cause.STEPPED})

    def fix(self, facts: FileFacts, conflict: Conflict, option: model.Option) -> FixPlan:
        return FixPlan(tuple(_fix(facts, conflict)))


def _fix(facts: FileFacts, conflict: Conflict) -> list[Edit]:
    """Compute the carrier again after the step (a new graph through the updated parameters), and
    no longer retain the old graph for it."""
    step = conflict.freed_by.statement
    carrier = conflict.carrier
    if step is None or carrier is None or carrier.holder.kind != "variable" or len(carrier.assignments) != 1:
        return []
    definition = carrier.assignments[0]
    if not (isinstance(definition, cst.SimpleStatementLine) and len(definition.body) == 1
            and isinstance(definition.body[0], cst.Assign)):
        return []
    block = facts.parent(step)
    if block is None or facts.parent(definition) is not block:
        return []
    body = list(getattr(block, "body", ()))
    if body.index(definition) > body.index(step):
        return []
    # Everything the definition reads must still mean the same after the step.
    between = body[body.index(definition) + 1: body.index(step) + 1]
    needed = codemods.names_read(definition) - codemods.assigned_names(definition)
    if any(codemods.assigned_names(s) & needed for s in between):
        return []
    edits = [codemods.insert_after(facts, step, codemods.statement_text(facts, definition))]
    retained = conflict.retained_by
    if retained is not None and isinstance(retained.node, cst.Call) and facts.is_local(retained.node) \
            and any(a.keyword is not None and a.keyword.value == "retain_graph" for a in retained.node.args):
        edits.append(codemods.drop_keyword(facts, retained.node, "retain_graph"))
    return edits
