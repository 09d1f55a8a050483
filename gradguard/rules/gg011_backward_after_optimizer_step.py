"""GG011: a backward goes through a retained graph whose saved parameters an optimizer step changed."""

from __future__ import annotations

import libcst as cst

from gradguard import causes as model
from gradguard import codemods
from gradguard.analysis import api
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
    """Compute the carrier again after the step (a new graph through the updated parameters), with
    the statements between that lead from it to the failing backward's root (`G_loss` built from
    `prob_fake`), and no longer retain the old graph for it, unless what is recomputed still reads
    a value of the retained graph (the generator's output a GAN's discriminator loss went through)."""
    step = conflict.freed_by.statement
    carrier = conflict.carrier
    if step is None or carrier is None or carrier.holder.kind != "variable" or len(carrier.assignments) > 1:
        return []
    block = facts.parent(step)
    body = list(getattr(block, "body", ()))
    if step not in body:
        return []  # the step is in another module's code
    if carrier.assignments:
        definition = carrier.assignments[0]
    else:
        # The failing root is the carrier (`actor_loss` computed before the critic's step): its last
        # assignment before the step, in the step's block.
        before = [s for s in body[:body.index(step)] if carrier.holder.text in codemods.target_texts(s)]
        if not before:
            return []
        definition = before[-1]
    if not _plain_assignment(definition) or definition not in body:
        return []
    if body.index(definition) > body.index(step):
        return []
    between = body[body.index(definition) + 1: body.index(step) + 1]
    chain = [*_stepped_inputs(body[:body.index(definition)], definition, conflict.stepped), definition,
             *_leading_to(between, carrier.holder.text, conflict.failing.root_text)]
    between = body[body.index(chain[0]) + 1: body.index(step) + 1]
    # After the last update before the failing backward (SAC's two Q-function steps).
    anchor = _last_update(body, step, conflict.failing.statement)
    # Everything the recomputed statements read must still mean the same after the step.
    needed = set().union(*(codemods.names_read(s) - codemods.assigned_names(s) for s in chain))
    if any(codemods.assigned_names(s) & needed for s in between if s not in chain):
        return []
    lines = [line for s in chain for line in codemods.statement_text(facts, s)]
    edits = [codemods.insert_after(facts, anchor, lines)]
    assigned = set().union(*(codemods.assigned_names(s) for s in chain))
    if not any(codemods.names_read(s) & assigned for s in between if s not in chain):
        # Nothing before the step uses them: the computation moves (its forward runs once, as the
        # program would have written it) instead of running twice.
        edits = [codemods.remove_statement(facts, s) for s in chain] + edits
    retained = conflict.retained_by
    outside = needed - assigned
    if retained is not None and isinstance(retained.node, cst.Call) and facts.is_local(retained.node) \
            and any(a.keyword is not None and a.keyword.value == "retain_graph" for a in retained.node.args) \
            and not _reads_retained(body, retained.statement, outside):
        edits.append(codemods.drop_keyword(facts, retained.node, "retain_graph"))
    return edits


def _stepped_inputs(before: list[cst.CSTNode], definition: cst.CSTNode, stepped: frozenset[str]) -> list[cst.CSTNode]:
    """The plain assignments before the definition that it is computed from (directly or not) and
    that call a module the step updated (`q_new = torch.min(self.qf1(obs, a), self.qf2(obs, a))`
    for a policy loss): computed again with it. What no stepped module made (the policy's own
    sample) is kept."""
    feeding = codemods.names_read(definition)
    inputs: list[cst.CSTNode] = []
    for statement in reversed(before):
        if _plain_assignment(statement) and codemods.assigned_names(statement) & feeding:
            feeding |= codemods.names_read(statement)
            inputs.insert(0, statement)
    stale: set[str] = set()
    kept = []
    for statement in inputs:
        if codemods.names_read(statement) & (stepped | stale):
            stale |= codemods.assigned_names(statement)
            kept.append(statement)
    return kept


def _last_update(body: list[cst.CSTNode], step: cst.CSTNode, failing: cst.CSTNode | None) -> cst.CSTNode:
    """The last optimizer update of the block from `step` on, before the failing backward."""
    end = body.index(failing) if failing in body else len(body)
    updates = api.weight_updates()
    last = step
    for statement in body[body.index(step):end]:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and statement.body else None
        call = small.value if isinstance(small, cst.Expr) else None
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in updates:
            last = statement
    return last


def _plain_assignment(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
        and isinstance(statement.body[0], cst.Assign)


def _leading_to(between: list[cst.CSTNode], carrier: str, root: str | None) -> list[cst.CSTNode]:
    """The plain assignments among `between` that compute, from the carrier, what the failing root
    is made of (not a sibling loss of the same outputs that the step's own backward used)."""
    if not root:
        return []
    wanted = {root}
    for statement in reversed(between):
        if _plain_assignment(statement) and codemods.assigned_names(statement) & wanted:
            wanted |= codemods.names_read(statement)
    computed = {carrier}
    chain = []
    for statement in between:
        if _plain_assignment(statement) and codemods.assigned_names(statement) & wanted \
                and codemods.names_read(statement) & computed:
            computed |= codemods.assigned_names(statement)
            chain.append(statement)
    return chain


def _reads_retained(body: list[cst.CSTNode], retaining: cst.CSTNode | None, read: set[str]) -> bool:
    """Whether names the recomputed code reads were assigned in the block before the retaining
    backward and went into its root: their graph is part of the one it retained, and a later backward
    through them needs it kept."""
    if retaining is None or retaining not in body:
        return bool(read)
    before = body[:body.index(retaining)]
    feeding = codemods.names_read(retaining)
    for statement in reversed(before):
        if codemods.assigned_names(statement) & feeding:
            feeding |= codemods.names_read(statement)
    assigned = set().union(*(codemods.assigned_names(s) for s in before)) if before else set()
    return bool(read & feeding & assigned)
