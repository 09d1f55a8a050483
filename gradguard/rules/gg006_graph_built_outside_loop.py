"""GG006: a tensor computed once from parameters (before the loop, in `__init__`, memoized) is used
in every iteration's loss."""

from __future__ import annotations

import libcst as cst

from gradguard import causes as model
from gradguard import codemods
from gradguard.analysis import knowledge as K
from gradguard.analysis.api.torch_functions import GRAD_INPUTS
from gradguard.analysis.facts import Cause, Conflict, FileFacts
from gradguard.analysis.values import CallKind
from gradguard.model import Edit, Location, Span
from gradguard.rules import ConflictRule, FixPlan, assigns_none, computed_without_graph, single_assignment


class GraphBuiltOutsideLoop(ConflictRule):
    """The graph behind a precomputed tensor is freed by the first iteration's backward."""

    code = "GG006"
    causes = frozenset({Cause.BUILT_BEFORE_LOOP, Cause.MEMOIZED})

    def fix(self, facts: FileFacts, conflict: Conflict, option: model.Option) -> FixPlan:
        if option.kind is model.FixKind.NO_GRAD:
            edits, title = computed_without_graph(facts, conflict)
        else:
            edits, title = _fix(facts, conflict)
        return FixPlan(tuple(edits), title)


def _fix(facts: FileFacts, conflict: Conflict) -> tuple[list[Edit], str | None]:
    if conflict.memoised:
        return _unmemoise(facts, conflict.memoised), "Compute `{carrier}` on every call instead of caching it"
    carrier = conflict.carrier
    if carrier is None:
        return [], None
    assignments = [a for a in carrier.assignments if not assigns_none(a)]
    if len(assignments) != 1:
        return [], None
    definition = assignments[0]
    if not single_assignment(definition):
        return [], None
    if conflict.masked and not _differentiated_through(facts, conflict, definition):
        return _unmask(facts, conflict, definition)
    guard = facts.parent(facts.parent(definition))  # type: ignore[arg-type]
    if conflict.cause is Cause.MEMOIZED:
        if isinstance(guard, cst.If) and guard.orelse is None:
            return [_unguard(facts, guard)], "Recompute `{carrier}` on every call instead of caching it"
        return [], None
    loop = conflict.loop
    if carrier.reference is None:
        # The loss compares against it at a difference, a ratio or a loss's target, but as which
        # argument is not known: a snapshot (no grad at source) or a value to recompute.
        return [], _SNAPSHOT_OR_RECOMPUTE
    if isinstance(loop, (cst.For, cst.While)) and any(
            other != carrier.holder.text and codemods.reads_name(loop, other)
            for other in codemods.target_names(definition)):
        # It also assigns values the loop reads (`obs, actions, old_log_probs = collect(...)`):
        # computed again in the loop, those would change too.
        return [], _BY_HAND
    if isinstance(loop, (cst.For, cst.While)) and any(read.shape == "data" for read in carrier.reads):
        if carrier.is_data:
            return [], _AT_SOURCE  # the loader itself: the tensor it was built from is what to detach
        # The loop never reads it by name, only through what was built from it (a dataset of
        # labels a model computed): it is data, so it is built without a graph at its source.
        value = definition.body[0].value  # type: ignore[attr-defined]
        return [codemods.replace_node(facts, value, codemods.detached(facts, value))], None
    if isinstance(loop, (cst.For, cst.While)) and facts.parent(definition) is facts.parent(loop) \
            and not codemods.used_between(facts, definition, loop, carrier.holder.text):
        first = codemods.first_statement(loop.body)
        if first is not None:
            if codemods.rebound_in(loop, codemods.read_names(definition)):
                # What it is computed from changes in the loop: moved there, it would compute another value.
                return [], _BY_HAND
            lines = codemods.statement_text(facts, definition, comments=True)
            return [codemods.remove_statement(facts, definition, comments=True),
                    codemods.insert_before(facts, first, lines)], None
    if isinstance(loop, (cst.For, cst.While)):
        nested = _into_inner_loop(facts, conflict, loop, definition, carrier.holder.text)
        if nested is not None:
            return nested
        moved = _into_loop_of_another_function(facts, conflict, loop, definition)
        if moved is not None:
            return moved
    if conflict.entry_statement is None:
        return [], None
    if isinstance(loop, (cst.For, cst.While)) and codemods.inside(facts, conflict.entry_statement, loop) \
            and codemods.rebound_in(loop, codemods.read_names(definition)):
        return [], _BY_HAND
    statement = _for_entry(facts, conflict, definition)
    if statement is None:
        return [], _BY_HAND
    lines = codemods.statement_text(facts, statement)
    return [codemods.insert_before(facts, _first_read(facts, conflict), lines)], None


def _into_inner_loop(facts: FileFacts, conflict: Conflict, loop: cst.For | cst.While,
                     definition: cst.CSTNode, name: str) -> tuple[list[Edit], str | None] | None:
    """The value computed before an outer loop (`for epoch ...`) and used only in the inner loop that
    carries it (`for batch ...`): moved to the start of the inner loop, so that it is computed once
    per iteration there and no more than that (a forward with dropout draws its masks as often as
    the hand fix does). None when it is used anywhere else, or what it reads changes in the loops."""
    outer: cst.CSTNode | None = loop
    while outer is not None and facts.parent(outer) is not facts.parent(definition):
        outer = facts.parent(outer)
    if outer is None or outer is loop or not isinstance(outer, (cst.For, cst.While)):
        return None
    block = list(getattr(facts.parent(definition), "body", ()))
    if codemods.used_between(facts, definition, outer, name) \
            or any(codemods.reads_name(s, name) for s in block[block.index(outer) + 1:]) \
            or codemods.mentioned_outside(outer, loop, name) \
            or codemods.rebound_in(outer, codemods.read_names(definition) | {name}):
        return None
    entry = conflict.entry_statement
    # Before its first read there (after a forward that recomputes what it reads, such as a legacy
    # weight_norm's `weight`), else at the start of the loop.
    first = _first_read(facts, conflict) if entry is not None and codemods.inside(facts, entry, loop) \
        else codemods.first_statement(loop.body)
    if first is None:
        return None
    lines = codemods.statement_text(facts, definition, comments=True)
    return [codemods.remove_statement(facts, definition, comments=True),
            codemods.insert_before(facts, first, lines)], None


def _differentiated_through(facts: FileFacts, conflict: Conflict, definition: cst.CSTNode) -> bool:
    """Whether the failing call takes gradients with respect to what the value is computed from
    (a PINN's `autograd.grad(u.sum(), x)` through features built from `x`): that graph is wanted
    every iteration, so it is computed again there, never detached."""
    call = conflict.failing.node
    if not isinstance(call, cst.Call) or conflict.failing.kind is not CallKind.GRAD:
        return False
    position, keyword = GRAD_INPUTS
    positional = [a for a in call.args if a.keyword is None and not a.star]
    inputs = [a.value for a in call.args if a.keyword is not None and a.keyword.value == keyword]
    inputs += [positional[position].value] if len(positional) > position else []
    sources = codemods.read_names(definition)
    return any(codemods.names_read(cst.Expr(value)) & sources for value in inputs)


def _unmask(facts: FileFacts, conflict: Conflict, definition: cst.CSTNode) -> tuple[list[Edit], str | None]:
    """`retain_graph=True` kept a graph built before the loop alive, and no optimizer of the loop
    updates what that graph saved (else the step would make the backward fail): the graph only
    carries gradients nobody uses. Build the value without it, and retain nothing."""
    failing = conflict.failing.node
    if any(owner.startswith("?") for owner in conflict.stepped):
        # An optimizer of unknown modules stepped: it may update what the graph was built from (a
        # regularisation term of the weights must then be recomputed, not detached).
        return [], _UNMASK_BY_HAND
    if not isinstance(failing, cst.Call) or not facts.is_local(failing):
        return [], _AT_SOURCE
    value = definition.body[0].value  # type: ignore[attr-defined]
    edits = [codemods.replace_node(facts, value, codemods.detached(facts, value))]
    edits += [codemods.drop_keyword(facts, failing, keyword) for keyword in K.RETAIN_GRAPH_KEYWORDS
              if any(a.keyword is not None and a.keyword.value == keyword for a in failing.args)]
    return edits, "Detach `{carrier}` where it is built, and stop retaining the graph"


def _into_loop_of_another_function(facts: FileFacts, conflict: Conflict, loop: cst.For | cst.While,
                                   definition: cst.CSTNode) -> tuple[list[Edit], str | None] | None:
    """A value computed outside the function whose loop uses it (passed in as an argument, or kept on
    an object by its `__init__`): computed again at the start of each iteration of that loop, from the
    module's own variables, where every name it reads is bound to the same object. None when the
    loop is in the definition's own function, the loop does not read the value itself (a method it
    calls does), or the value cannot be traced to one module-level assignment."""
    function = codemods.enclosing_function(facts, loop)
    assert conflict.carrier is not None
    read_in_loop = any(facts.is_local(read.expr) and codemods.inside(facts, read.expr, loop)
                       for read in conflict.carrier.reads)
    if function is None or codemods.inside(facts, definition, function) or not read_in_loop:
        return None
    value = codemods.module_origin(facts, definition)
    first = codemods.first_statement(loop.body)
    if value is None or first is None:
        return None
    names = codemods.read_names(value)
    if codemods.rebound_in(loop, names) or not codemods.same_objects_in(facts, function, names):
        return [], _BY_HAND
    return [codemods.insert_before(facts, first, [f"{conflict.carrier.holder.text} = {facts.code(value)}"])], None


def _first_read(facts: FileFacts, conflict: Conflict) -> cst.CSTNode:
    """The first statement of the entry's block that reads the carrier: recomputed later, the
    reads above it would still get the stale value."""
    assert conflict.entry_statement is not None and conflict.carrier is not None
    return codemods.first_reading(facts, conflict.entry_statement, conflict.carrier.holder.text)


_BY_HAND = "Compute `{carrier}` inside the loop, from values bound there"
_SNAPSHOT_OR_RECOMPUTE = ("Compute `{carrier}` under `no_grad()` where it is made if the loss compares against it "
                          "as a fixed reference, or inside the loop if gradients should flow through it each step")
_UNMASK_BY_HAND = ("Compute `{carrier}` inside the loop if it must follow the weights, or build it without a graph "
                   "(`.detach()`) if it is data; then drop `retain_graph=True`")
_AT_SOURCE = "Build the tensors `{carrier}` holds without a graph (`.detach()` or `torch.no_grad()` where they are computed)"


def _for_entry(facts: FileFacts, conflict: Conflict, definition: cst.CSTNode) -> cst.CSTNode | None:
    """The definition as it reads where the carrier enters: a method's `self.w = self.weight * m`
    becomes `layer.w = layer.weight * m` in a loop that reads `layer.w` (None when that is unknown)."""
    method = codemods.enclosing_function(facts, definition)
    entry = conflict.entry_statement
    assert entry is not None
    receiver = codemods.first_parameter(method) if method is not None else None
    if method is not None and receiver is not None:
        definition = codemods.parameters_as_kept(method, receiver, definition)
    if method is None or receiver is None or receiver not in codemods.read_names(definition):
        return definition
    entry_method = codemods.enclosing_function(facts, entry)
    if entry_method is not None and facts.parent(facts.parent(entry_method)) is facts.parent(facts.parent(method)) \
            and codemods.first_parameter(entry_method) == receiver:
        return definition  # another method of the same class: `self` is the same object there
    attribute = conflict.carrier.holder.text.rsplit(".", 1)[-1] if conflict.carrier else ""
    owners = {facts.code(read.expr.value) for read in conflict.carrier.reads  # type: ignore[union-attr]
              if isinstance(read.expr, cst.Attribute) and read.expr.attr.value == attribute
              and codemods.inside(facts, read.expr, entry_method or facts.module)}
    owners.discard(receiver)
    if len(owners) != 1:
        return None
    return codemods.renamed(definition, receiver, owners.pop())


def _unmemoise(facts: FileFacts, decorators: tuple[tuple[cst.Decorator, str], ...]) -> list[Edit]:
    """Replace each caching decorator by the one that does not cache, or remove it: each call (or
    read) computes its result again, from the parameters as they are now. None when a decorator
    shares its line with other code."""
    edits = []
    for decorator, uncached in decorators:
        facts = facts.home(decorator)
        span = facts.span(decorator)
        line = facts.lines[span.start.row - 1]
        if span.start.row != span.end.row or not line.strip().startswith("@"):
            return []
        indent = line[: len(line) - len(line.lstrip())]
        text = f"{indent}@{uncached}{facts.newline()}" if uncached else ""
        edits.append(Edit(Span(Location(span.start.row, 1), Location(span.start.row + 1, 1)), text, facts.path))
    return edits


def _unguard(facts: FileFacts, guard: cst.If) -> Edit:
    """Replace `if cache is None: cache = ...` by its body, one level less indented."""
    facts = facts.home(guard)
    outer = facts.indent_of(guard)
    body = guard.body
    lines: list[str] = []
    if isinstance(body, cst.IndentedBlock):
        for statement in body.body:
            lines.extend(codemods.statement_text(facts, statement))
    span = facts.span(guard)
    newline = facts.newline()
    text = "".join(f"{outer}{line}{newline}" for line in lines)
    return Edit(Span(Location(span.start.row, 1), Location(span.end.row + 1, 1)), text, facts.path)
