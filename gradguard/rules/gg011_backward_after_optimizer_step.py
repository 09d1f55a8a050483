"""GG011: a backward goes through a retained graph whose saved parameters an optimizer step changed."""

from __future__ import annotations

import libcst as cst

from gradguard import causes as model
from gradguard import codemods
from gradguard.analysis import api
from gradguard.analysis.api.torch_tensor import RETAIN_GRAPH
from gradguard.analysis.facts import Cause, Conflict, FileFacts
from gradguard.model import Edit
from gradguard.rules import ConflictRule, FixPlan, computed_without_graph


class BackwardAfterOptimizerStep(ConflictRule):
    """A graph kept with `retain_graph=True` is backward-ed again after an optimizer step updated,
    in place, the parameters it saved."""

    code = "GG011"
    causes = frozenset({Cause.STEPPED})

    def fields(self, facts: FileFacts, conflict: Conflict) -> dict[str, str]:
        found = super().fields(facts, conflict)
        if conflict.written is None:
            change = f"the optimizer step at {found['line']} has since changed in place the parameters"
        else:
            # A write of the program's own (a Polyak blend, a memory bank, an embedding's max_norm).
            change = f"the in-place write at {found['line']} has since changed `{conflict.written.text}`, which"
        return {**found, "change": change, "written": conflict.written.text if conflict.written is not None else ""}

    def fix(self, facts: FileFacts, conflict: Conflict, option: model.Option) -> FixPlan:
        if option.kind is model.FixKind.NO_GRAD:
            # Made by modules no optimizer trains (a target network the program blends in place).
            edits, title = computed_without_graph(facts, conflict)
            return FixPlan(tuple(edits), title)
        if option.kind is model.FixKind.MOVE_STEP:
            return FixPlan(tuple(_move_steps(facts, conflict)), MOVE_STEP_TITLE)
        if option.kind is model.FixKind.OTHER:
            edits = _write_into_a_clone(facts, conflict)
            return FixPlan(tuple(edits), INTO_A_CLONE if edits else OVERWRITTEN_BY_HAND)
        return FixPlan(tuple(_fix(facts, conflict)))


MOVE_STEP_TITLE = "Run the backward calls before the optimizer steps (gradients reset before the first)"
# The program's own in-place write changed what the graph saved: which out-of-place form keeps its
# meaning (a mask, a clone, a copy under no_grad) is the program's to say.
OVERWRITTEN_BY_HAND = "Write `{written}` out of place (`x = x * mask` instead of `x[mask] = 0`), or into a clone"


INTO_A_CLONE = "Write `{written}` out of place: into a clone, so the tensor the graph saved keeps its values"


def _write_into_a_clone(facts: FileFacts, conflict: Conflict) -> list[Edit]:
    """`hx = hx.clone()` just before the program's own in-place write (`hx[done] = 0.0`): the name now
    holds a copy with the same values and the same graph behind it, the write changes the copy, and
    the tensor the graph saved is left as it was (an out-of-place write, whatever its form)."""
    written, statement = conflict.written, conflict.freed_by.statement
    if written is None or statement is None or written.kind != "variable" or not written.text.isidentifier() \
            or not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return []
    home = facts.home(statement)
    scope = codemods.enclosing_function(home, statement)
    if scope is not None and written.text in codemods.parameter_names(scope):
        # A helper resetting its caller's tensor (`def reset(hx, done): hx[done] = 0`): the write is
        # the point; a clone would leave the caller's tensor as it was.
        return []
    if not codemods.bound_only_to_new_values(home, scope, written.text):
        return []  # it may be another name's tensor too (`hx = memory["hx"]`), which the write must change
    return [codemods.insert_before(facts, statement, [f"{written.text} = {written.text}.clone()"])]


def _method_called(statement: cst.CSTNode, methods: frozenset[str]) -> bool:
    """Whether a statement is one call of a method named in `methods` (`opt.step()`)."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    call = small.value if isinstance(small, cst.Expr) else None
    return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in methods


def _move_steps(facts: FileFacts, conflict: Conflict) -> list[Edit]:
    """Every backward through the forward before any step: the optimizer steps between the retaining
    backward and the failing one move right after the failing one, in their order, and the gradient
    resets between them move right before the retaining one (a reset after it would drop the
    gradients it left on the shared parameters). All in one block of the linted file, else no fix."""
    step, failing, retained = conflict.freed_by.statement, conflict.failing.statement, conflict.retained_by
    if step is None or failing is None or retained is None or retained.statement is None:
        return []
    body = list(getattr(facts.parent(step), "body", ()))
    if any(s not in body for s in (failing, retained.statement)) or not facts.is_local(step):
        return []
    first, last = body.index(retained.statement), body.index(failing)
    if not first < body.index(step) < last:
        return []
    between = body[first + 1:last]
    steps = [s for s in between if _method_called(s, api.weight_updates())]
    resets = [s for s in between if _method_called(s, api.grad_resets())]
    if step not in steps:
        return []
    edits = [codemods.remove_statement(facts, s) for s in (*resets, *steps)]
    if resets:
        edits.append(codemods.insert_before(facts, retained.statement,
                                            [line for s in resets for line in codemods.statement_text(facts, s)]))
    moved = [line for s in steps for line in codemods.statement_text(facts, s)]
    edits.append(codemods.insert_after(facts, failing, moved))
    return edits


def _fix(facts: FileFacts, conflict: Conflict) -> list[Edit]:
    """Compute the carrier again after the last update (a new graph through the updated parameters),
    with everything else the failing loss is made of that the step made stale (`_stale_chain`), and no
    longer retain the old graph for it, unless what is recomputed still reads a value of the retained
    graph (the generator's output a GAN's discriminator loss went through)."""
    step = conflict.freed_by.statement
    carrier = conflict.carrier
    if step is None or carrier is None or carrier.holder.kind != "variable" or len(carrier.assignments) > 1:
        return []
    if not facts.is_local(step):
        return []  # the step is in another module's code
    if carrier.assignments and facts.is_local(carrier.assignments[0]):
        # The step may sit deeper than the loss's definition (`for p in D.parameters(): p.sub_(...)`
        # under `with torch.no_grad():`, a step by hand): the statement of that block holding it.
        step = _in_block_of(facts, step, carrier.assignments[0]) or step
    block = facts.parent(step)
    body = list(getattr(block, "body", ()))
    if step not in body:
        return []
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
    chain = _stale_chain(body[:body.index(step)], conflict.failing.statement, body,
                         {conflict.failing.root_text, carrier.holder.text}, {carrier.holder.text} | conflict.stepped)
    if definition not in chain:
        return []
    if any(statement in facts.draws for statement in chain):
        # Run again, it would draw other numbers (a rollout's observations, a sampled batch): not
        # the same values through updated weights.
        return []
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
            and any(a.keyword is not None and a.keyword.value == RETAIN_GRAPH for a in retained.node.args) \
            and not _reads_retained(body, retained.statement, outside):
        edits.append(codemods.drop_keyword(facts, retained.node, RETAIN_GRAPH))
    return edits


def _in_block_of(facts: FileFacts, node: cst.CSTNode, statement: cst.CSTNode) -> cst.CSTNode | None:
    """The statement of `statement`'s block that holds `node` (itself, or a compound statement around
    it); None when that block holds no statement around it."""
    block = facts.parent(statement)
    current: cst.CSTNode | None = node
    while current is not None and facts.parent(current) is not block:
        current = facts.parent(current)
    return current


def _stale_chain(before: list[cst.CSTNode], failing: cst.CSTNode | None, body: list[cst.CSTNode],
                 roots: set[str | None], stale: set[str]) -> list[cst.CSTNode]:
    """The plain assignments before the step that the failing loss is made of (directly or not,
    through statements up to the failing backward) and that read what the step made stale: the
    carrier, a module the step updated, or a value computed from them (a GAN's `d_real`, `d_fake`
    and their partition function for the generator loss; SAC's `q_new`, not the policy's own sample).
    In program order. `roots`: the failing loss and the carrier (the loss may be built in a block
    the syntax of this one does not show, `if it % k == 0:`)."""
    end = body.index(failing) if failing in body else len(body)
    wanted = {root for root in roots if root}
    for statement in reversed(body[:end]):
        if _plain_assignment(statement) and codemods.assigned_names(statement) & wanted:
            wanted |= codemods.names_read(statement)
    stale = set(stale)
    chain = []
    for statement in before:
        if _plain_assignment(statement) and codemods.assigned_names(statement) & wanted \
                and codemods.names_read(statement) & stale:
            stale |= codemods.assigned_names(statement)
            chain.append(statement)
    return chain


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
