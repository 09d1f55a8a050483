"""From what the interpreter recorded to the facts rules read: which variable carried the stale graph,
why it was stale (the cause), and which retains and stored graphs are needless."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace

import libcst as cst

from gradguard.analysis import api
from gradguard.analysis import knowledge as K
from gradguard.analysis.autograd import Boundary, Met, guessed, owns
from gradguard.analysis.facts import (
    Carrier,
    Cause,
    Conflict,
    FileFacts,
    KeptAlive,
    NeedlessRetain,
)
from gradguard.analysis.names import canonical, qualify, targets_of
from gradguard.analysis.program import Program
from gradguard.analysis.snapshot import reference_only, untrained
from gradguard.analysis.values import (
    GENERATIONS,
    CallInfo,
    CallKind,
    Holder,
    Kind,
    Read,
    generation_of,
    of_parameters,
)
from gradguard.model import Note, Span
from gradguard.parse import walk


def facts_of(program: Program, source: str) -> FileFacts:
    """Everything the rules need, from one finished analysis."""
    facts = FileFacts(program.module, source)
    chosen: dict[tuple[int, int], Met] = {}
    for met in program.conflicts.values():
        key = (id(met.failing.node), id(met.freed_by.node))
        if key not in chosen or _known(chosen[key]) < _known(met):
            # The same conflict met by several entries (`train(model, ...)` alone and through the
            # `main()` that builds the model): the one that saw what the carrier holds, and which
            # optimizers stepped, says more.
            chosen[key] = met
    first: dict[tuple[int, int], Met] = {}
    for met in program.conflicts.values():
        first.setdefault((met.entry, id(met.failing.node)), met)
    for met in chosen.values():
        earlier = first[(met.entry, id(met.failing.node))]
        if earlier is not met and earlier.why.written is not None and not met.why.by_step:
            # The call first fails on a tensor written in place under its graph (met in an earlier
            # iteration): the program stops there, before a freed graph later iterations would reach.
            continue
        facts.conflicts.append(_conflict(program, met, facts))
    facts.conflicts = _without_guessed_owners(facts.conflicts, program.known_steps)
    facts.needless_retains.extend(_needless_retains(program))
    facts.kept_alive.extend(_kept_alive(program))
    facts.lightning_backward.extend(program.framework_calls)
    facts.draws = frozenset(program.drawing)
    facts.makes_objects = frozenset(program.making)
    if program.loaded_modules:
        # Findings belong to the file whose call fails; code of imported modules only explains them.
        # A backward in a helper of another module fails for the call of this file that ran it.
        facts.conflicts = [c if facts.is_local(c.failing.node) else _at_local_call(program, c)
                           for c in facts.conflicts if facts.is_local(c.failing.node) or (
                               c.failing.local_call is not None and facts.is_local(c.failing.local_call[0]))]
        facts.needless_retains = [r for r in facts.needless_retains if facts.is_local(r.call.node)]
        facts.kept_alive = [k for k in facts.kept_alive if facts.is_local(k.statement)]
        facts.lightning_backward = [c for c in facts.lightning_backward if facts.is_local(c.node)]
        facts.elsewhere = _elsewhere(program)
        facts.foreign = _foreign(program, facts)
        base = os.path.dirname(program.project.file) if program.project and program.project.file else ""
        facts.shown_path = lambda path: os.path.relpath(path, base) if base else path
    if program.project is not None:
        facts.dependencies = program.project.dependencies
    facts.incomplete = tuple(_incomplete(program, facts))
    facts.graphless_backwards = tuple(sorted(facts.span(call).start.row for call in program.graphless_backwards
                                             if facts.is_local(call)))
    return facts


def _items(program: Program, met: Met, read: Read) -> str | None:
    """What the items of a carried container are on every path of the entry that met the conflict
    (`Carrier.items`)."""
    if read.shape != "container" or read.items is None:
        return None
    elsewhere = program.assigned_items.get((met.entry, read.holder.key), read.items)
    return read.items if elsewhere in ("", read.items) else None


def _container(program: Program, met: Met, read: Read) -> str | None:
    """Whether a carried container is a list or a dict on every path of the entry (`Carrier.container`)."""
    if read.shape != "container" or read.container is None:
        return None
    elsewhere = program.assigned_containers.get((met.entry, read.holder.key), read.container)
    return read.container if elsewhere == read.container else None


def _shape_known(met: Met) -> int:
    """How much a conflict's carrier read says of what the carrier holds: nothing (made by an unseen
    module), that it is a container but not what its items are, or all of it."""
    chosen = _best_boundary(list(met.boundary))
    if chosen is None:
        return 2
    read = outermost(chosen.read)
    return 0 if read.shape == "unknown" else 1 if read.shape == "container" and read.items is None else 2


def _known(met: Met) -> tuple[int, bool]:
    return _shape_known(met), bool(met.why.stepped) and not guessed(met.why.stepped)


def _without_guessed_owners(conflicts: list[Conflict], known_steps: set[cst.CSTNode]) -> list[Conflict]:
    """An in-place conflict that rests on a guess of what an optimizer of unknown modules updates
    yields to another finding at the same call made without that guess (the entry analysis of
    `train(policy, old_policy, optimizer)` guesses; the program's own call of it knows), and to the
    run of the same step where its optimizer's modules were known and which met no such conflict
    (the program's `main()` calls `update(actor, log_alpha, ...)` with the objects it built)."""
    def on_guess(conflict: Conflict) -> bool:
        return conflict.cause is Cause.STEPPED and guessed(conflict.stepped)

    known = {id(c.failing.node) for c in conflicts if not on_guess(c)}
    return [c for c in conflicts if not (on_guess(c) and (id(c.failing.node) in known
                                                          or c.freed_by.node in known_steps))]


def _at_local_call(program: Program, conflict: Conflict) -> Conflict:
    """A conflict whose failing call is in another module, reported at the linted file's call that
    ran that module's code; a root or carrier that is a parameter of the called helper is named by
    the argument the linted file passed (`policy_loss`, not the helper's `loss`)."""
    from gradguard.analysis.values import Holder

    failing = conflict.failing
    assert failing.local_call is not None
    node, statement = failing.local_call
    passed = _passed_arguments(program, failing, node)
    root = passed.get(failing.root_text, failing.root_text)
    local = replace(failing, node=node, statement=statement, local_call=None, root_text=root)
    carrier = conflict.carrier
    if carrier is not None and carrier.holder.kind == "variable" and carrier.holder.text in passed:
        text = passed[carrier.holder.text]
        carrier = replace(carrier, holder=Holder("variable", (text,), text), assignments=())
    return replace(conflict, failing=local, carrier=carrier, remote_failing=failing, remote_carrier=conflict.carrier)


def _passed_arguments(program: Program, failing: CallInfo, call: cst.CSTNode) -> dict[str, str]:
    """For the helper the remote failing call sits in, called directly by `call`: each parameter's
    name, and the text of the argument `call` passed for it."""
    if not isinstance(call, cst.Call):
        return {}
    function = None
    for info in program.loaded_modules:
        current = info.parents.get(failing.node)
        while current is not None and not isinstance(current, cst.FunctionDef):
            current = info.parents.get(current)
        if current is not None:
            function = current
            break
    if function is None:
        return {}
    params = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    if isinstance(call.func, cst.Attribute) and params and params[0] in ("self", "cls"):
        params = params[1:]
    code = cst.Module(body=[]).code_for_node
    passed: dict[str, str] = {}
    positional = [a for a in call.args if a.keyword is None and not a.star]
    for name, arg in zip(params, positional):
        passed[name] = code(arg.value)
    for arg in call.args:
        if arg.keyword is not None:
            passed[arg.keyword.value] = code(arg.value)
    return passed


def _elsewhere(program: Program):  # type: ignore[no-untyped-def]
    """Where the nodes of imported project modules are, relative to the linted file."""
    base = os.path.dirname(program.project.file) if program.project and program.project.file else ""

    def where(node: cst.CSTNode) -> tuple[str, Span] | None:
        for info in program.loaded_modules:
            span = info.span(node)
            if span is not None:
                return os.path.relpath(info.path, base) if base else info.path, span
        return None

    return where


def _foreign(program: Program, linted: FileFacts) -> Callable[[cst.CSTNode], FileFacts | None]:
    """The facts of the imported project module that holds a node, made once per module when a rule
    asks (to build a fix there): its text is its syntax tree's, which is the file's, byte for byte."""
    made: dict[int, FileFacts] = {}

    def facts_of(node: cst.CSTNode) -> FileFacts | None:
        for info in program.loaded_modules:
            if info.span(node) is None:
                continue
            found = made.get(id(info))
            if found is None:
                name = linted.elsewhere(info.module)
                label = name[0] if name is not None else info.path
                found = made[id(info)] = FileFacts(
                    info.module, info.module.code, describe_row=lambda row, label=label: f"{label}:{row}",
                    elsewhere=linted.elsewhere, foreign=facts_of, path=info.path)
            return found
        return None

    return facts_of


def _incomplete(program: Program, facts: FileFacts) -> list[Note]:
    """What the analysis did not follow to the end, one note each, at the row where that part starts
    (the function's `def`, the loop, the statement; none for the module level or another module's code)."""
    notes: list[Note] = []
    timed = [function for what, _, function in program.incomplete if what == "time"]
    for what, node, function in program.incomplete:
        where = "module level" if function == "<module>" else f"{function}()"
        if what == "time":
            # Past the file's time limit every entry point left is cut: one note says so.
            if function != timed[0]:
                continue
            if len(timed) > 1:
                where += f" and {len(timed) - 1} more {'entry point' if len(timed) == 2 else 'entry points'}"
        text = {"loop": "a loop did not reach a fixed point", "budget": "step budget exhausted",
                "recursion": "nesting too deep",
                "time": f"time limit ({program.time_budget:g} CPU-s for the file) reached"}.get(what, what)
        message = f"analysis incomplete in {where}: {text}"
        row = facts.span(node).start.row if node is not None and facts.is_local(node) else None
        if all((note.message, note.row) != (message, row) for note in notes):
            notes.append(Note(message, row))
    return notes


def _self_update(statement: cst.CSTNode, holder_text: str) -> tuple[bool, bool]:
    """Whether a statement computes a holder from its own old value, and whether by adding."""
    # A statement of a one-line suite (`if step % 2: h = net(h)`) is a small statement itself.
    smalls = statement.body if isinstance(statement, cst.SimpleStatementLine) else \
        (statement,) if isinstance(statement, cst.BaseSmallStatement) else None
    if smalls is not None:
        for small in smalls:
            if isinstance(small, cst.Expr) and _written_in_place(small.value) == holder_text:
                # `self.bank.index_copy_(0, idx, feats)`, `buf.mul_(m).add_(x)`: an in-place op keeps
                # the tensor's old history behind what it writes.
                return True, False
            if isinstance(small, cst.AugAssign):
                if _text(small.target) == holder_text:
                    return True, isinstance(small.operator, (cst.AddAssign, cst.SubtractAssign))
            elif isinstance(small, cst.Assign):
                if any(isinstance(t.target, cst.Subscript) and _text(t.target.value) == holder_text
                       for t in small.targets):
                    # Items written from the holder's own old items (`self.ema[idx] = m * self.ema[idx]
                    # + ...`): the tensor is updated from itself, in place.
                    return _mentions(small.value, holder_text), False
                targets = [_text(t.target) for t in small.targets]
                flat = [name for t in small.targets for name in _target_names(t.target)]
                if holder_text in targets or holder_text in flat:
                    reads = _mentions(small.value, holder_text)
                    additive = isinstance(small.value, cst.BinaryOperation) and isinstance(
                        small.value.operator, (cst.Add, cst.Subtract)) and _text(small.value.left) == holder_text
                    return reads, additive
    return False, False


def _written_in_place(expr: cst.BaseExpression) -> str | None:
    """The holder a chain of in-place tensor ops writes into (`self.buf` of `self.buf.mul_(m).add_(x)`)."""
    written = None
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        fact = api.method(expr.func.attr.value, api.Receiver.TENSOR)
        if fact is None or not fact.inplace:
            return None
        expr = expr.func.value
        written = _text(expr) or None
    return written


def _target_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _target_names(e.value)]
    text = _text(target)
    return [text] if text else []


def _text(node: cst.CSTNode) -> str:
    from gradguard.analysis.names import dotted

    return dotted(node) or "" if isinstance(node, cst.BaseExpression) else ""


def _mentions(expr: cst.CSTNode, holder_text: str) -> bool:
    found = False

    class Finder(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> bool:
            nonlocal found
            if node.value == holder_text:
                found = True
            return False

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            nonlocal found
            if _text(node) == holder_text:
                found = True
                return False
            walk(node.value, self)  # the attribute's own name (`model.posterior`) is no read of it
            return False

    walk(expr, Finder())
    return found


def _conflict(program: Program, met: Met, facts: FileFacts) -> Conflict:
    failing, freed_by, value, stale, why = met.failing, met.freed_by, met.value, met.stale, met.why
    same_root = bool(value.top & stale)
    carrier: Carrier | None = None
    loop: cst.CSTNode | None = None
    entry: cst.CSTNode | None = None
    boundary = [] if same_root else list(met.boundary)
    innermost = failing.loops[-1] if failing.loops else None

    def reinitialised(read: Read) -> bool:
        # Set afresh at the top of each iteration of the loop around the failing call, before the
        # statement that reads it (`decoder_hidden = encoder_hidden` before the decoding loop):
        # whatever it carries, it does not carry across iterations.
        body = getattr(getattr(innermost, "body", None), "body", ())
        if read.statement is None or not body:
            return False
        for statement in body:
            if _within(program, facts, read.statement, statement):
                return False
            if read.holder.text in targets_of(statement) \
                    and not _self_update(statement, read.holder.text)[0]:
                return True
        return False

    chosen = _best_boundary(boundary, reinitialised, failing, program.grown_holders)
    if chosen is not None and why.stepped and not _state_like(outermost(chosen.read), program.grown_holders):
        # Of the values of one forward the later loss reads (`recon, mu, logvar = vae(x)`), the one
        # that went into a module stepped in between (`critic(recon)`) is what the two losses share.
        chosen = next((b for b in boundary if not _state_like(outermost(b.read), program.grown_holders)
                       and _fed_stepped(program, freed_by, outermost(b.read), why.stepped)), chosen)
    read = outermost(chosen.read) if chosen is not None else None
    if why.by_step and chosen is not None and chosen.via is not None \
            and outermost(chosen.via).function is not read.function \
            and _qualname(outermost(chosen.via).function) == failing.function:
        # The step changed weights a callee's layer saved: the value the user holds is the one the
        # backward's own code read (`q_pi`), not the layer output inside the model's forward.
        read = outermost(chosen.via)
    created_loops = chosen.loops if chosen is not None else met.created_loops
    old_generation = chosen.old if chosen is not None else all(generation_of(n) for n in stale)
    before = [loop_ for loop_ in failing.loops if loop_ not in created_loops]
    before_loop = before[-1] if before else None

    if read is not None:
        first_reads = tuple(r for r in program.call_reads.get(freed_by, ())
                            if outermost(r).holder.key == read.holder.key)
        updates = [_self_update(d, read.holder.text) for d in read.defs]
        reads = tuple(b.read for b in boundary)
        carrier = Carrier(read.holder, tuple(read.defs), reads, first_reads,
                          is_tuple=read.shape == "tuple", is_container=read.shape == "container",
                          is_data=read.shape == "data", shape_unknown=read.shape == "unknown",
                          items=_items(program, met, read), container=_container(program, met, read),
                          sampled=read.shape == "container" and any(
                              _picked_from(program, outermost(r)) for r in (*reads, *first_reads)),
                          maybe_none=read.maybe_none or read.holder.key in program.none_assigned,
                          self_update=any(u for u, _ in updates) or read.holder.key in program.grown_holders,
                          augmented=any(a for _, a in updates),
                          fed=tuple(fed_reads(program.call_reads.get(freed_by, ()), first_reads, why.stepped,
                                              program.weighted)),
                          settled=_settled(program, (read, *first_reads), why.stepped,
                                           program.stepped_after.get((met.entry, id(failing.node)), frozenset())),
                          written_into_loss=read.holder.key in met.exclusive)
    elif met.holding and any(_self_update(d, name)[0] for name, defs, _ in met.holding for d in defs):
        # No read on the way to the stale graph was recorded (a state dict read inside a helper's
        # comprehension): the variable the loop carries from its own old value is what holds it.
        name, defs, kind = next((n, d, k) for n, d, k in met.holding if any(_self_update(s, n)[0] for s in d))
        carrier = Carrier(Holder("variable", (name,), name), tuple(defs), (), (), self_update=True,
                          is_tuple=kind is Kind.TUPLE, is_container=kind in (Kind.LIST, Kind.DICT))
    elif why.by_step and why.written is not None:
        # Nothing read on the way holds the graph by a name (a layer's output handed on): the tensor
        # written in place under it is what the user would look at.
        written = (why.call.statement,) if why.call.statement is not None else ()
        carrier = Carrier(why.written, written, (), ())
    elif failing.root_node is not None:
        holder = _root_holder(failing)
        if holder is not None:
            carrier = Carrier(holder, (), (), ())

    state_like = carrier is not None and (carrier.self_update or carrier.is_container)
    if state_like and carrier is not None and carrier.is_container and not carrier.self_update \
            and before_loop is not None and not (isinstance(before_loop, cst.For)
                                                 and _text(before_loop.iter) == carrier.holder.text) \
            and not any(_within(program, facts, d, before_loop) for d in carrier.assignments) \
            and not any(a.holder.key == carrier.holder.key and _within(program, facts, a.statement, before_loop)
                        for a in program.accumulations.values()):
        # A container the loop neither assigns nor adds to (masks computed once per epoch, used by
        # every batch): computed before the loop, not a collection the loop carries.
        state_like = False
    if state_like and before_loop is not None and carrier is not None and not carrier.is_container and not any(
            _self_update(d, carrier.holder.text)[0]
            and any(_within(program, facts, d, loop_) for loop_ in failing.loops[failing.loops.index(before_loop):])
            for d in carrier.assignments):
        # Updated from its old value only before the loop (`self.reg_loss = self.reg_loss + reg` in
        # `__init__`): computed once, not state the loop carries. (An update in a loop that the loop
        # runs through a call, `train(model, ...)` inside `for epoch in ...`, runs inside it.)
        state_like = False
    memoised = [n for n in sorted(stale) if n in program.memoised]
    decorators = next((info.memoised for info in map(program.memoised.get, memoised) if info is not None), ())
    memo_call = next((program.memo_calls[n] for n in memoised if n in program.memo_calls), None)
    if read is None and memo_call is not None:
        # No holder on the way back from the root kept the graph: the cached call handed it out
        # (`self.relative_bias(n)` under `functools.lru_cache`), named as the code calls it.
        text = cst.Module(body=[]).code_for_node(memo_call)
        carrier = Carrier(Holder("call", (text,), text), (), (), ())
    if same_root:
        cause = Cause.SAME_ROOT
    elif memoised and failing.loops:
        # Handed out again by a caching decorator: the first call's graph, every iteration.
        cause = Cause.MEMOIZED
        loop = _carrying_loop(failing, created_loops)
    elif before_loop is not None and not state_like:
        cause = Cause.BUILT_BEFORE_LOOP
        loop = before_loop
    elif old_generation and failing.loops:
        loop = _carrying_loop(failing, created_loops)
        if carrier is not None and carrier.augmented and carrier.holder.text == failing.root_text:
            cause = Cause.ACCUMULATED
        elif carrier is not None and not state_like and _guarded(program, facts, carrier.assignments):
            cause = Cause.MEMOIZED
        else:
            cause = Cause.LOOP_CARRIED
    elif freed_by is failing and failing.loops and carrier is not None and not state_like \
            and _guarded(program, facts, carrier.assignments):
        # Freed by this very call on an earlier iteration, and kept behind a test of the cache
        # itself (`if self.cache is None:`): filled on the first pass only, its site never runs again.
        cause = Cause.MEMOIZED
        loop = _carrying_loop(failing, created_loops)
    elif carrier is not None and carrier.fed and _produced_by_another_model(program, read, carrier.first_reads,
                                                                            why.stepped):
        cause = Cause.GAN_REUSE
    else:
        cause = Cause.SHARED_FORWARD
    if freed_by.kind is CallKind.GRAD and cause in (Cause.SAME_ROOT, Cause.SHARED_FORWARD, Cause.BUILT_BEFORE_LOOP):
        cause = Cause.GRAD_FREED
    if failing.kind is CallKind.FRAMEWORK and freed_by.kind is CallKind.FRAMEWORK:
        # The framework's backward of the previous batch freed what the object kept for this one
        # (`self.hidden` of a `training_step`): state carried across the framework's loop over batches.
        if carrier is not None and carrier.holder.kind == "attribute" and cause is not Cause.SAME_ROOT:
            cause = Cause.ACCUMULATED if carrier.augmented else Cause.LOOP_CARRIED
    elif CallKind.FRAMEWORK in (failing.kind, freed_by.kind):
        cause = Cause.FRAMEWORK
    if why.by_step:
        cause = Cause.STEPPED
    if met.masked and cause in (Cause.SAME_ROOT, Cause.SHARED_FORWARD, Cause.GAN_REUSE, Cause.GRAD_FREED):
        # Kept alive by the call's own `retain_graph=True`: what it goes through again each iteration
        # was built before the loop (`AutogradEvents._masked` keeps only such graphs).
        cause = Cause.BUILT_BEFORE_LOOP
        loop = before_loop or (failing.loops[-1] if failing.loops else None)
    if read is not None and not of_parameters(read.holder):
        # (A module's parameters written in place are no variable a statement of the loop can detach.)
        entry = _entry_statement(read, loop)
    elif carrier is not None and carrier.self_update and carrier.holder.kind == "variable" and loop is not None:
        # Known only as a variable holding the stale graph (no read on the way recorded): it is carried
        # in where the loop's body first mentions it.
        body = getattr(getattr(loop, "body", None), "body", ())
        entry = next((s for s in body if _mentions(s, carrier.holder.text)), None)
    if cause is Cause.BUILT_BEFORE_LOOP and carrier is not None and not met.masked:
        carrier = replace(carrier, untrained=untrained(program, met, why.stepped),
                          reference=reference_only(program, met))
    if cause is Cause.STEPPED and why.written is not None and carrier is not None:
        # Saved tensors a write of the program changed (a target network blended in place): made only
        # by modules no optimizer of the program trains, the value wants no graph at all. (The optimizer
        # an entry point was given is unknown there; the run that built it knows what it updates.)
        known = frozenset(o for o in program.optimizer_owners if not o.startswith("?"))
        carrier = replace(carrier, untrained=untrained(program, met, known or frozenset(program.optimizer_owners)))
    consumer_stepped = bool(carrier and carrier.fed)
    root_defs = _root_definitions(program, failing)
    only_freeing = [c for c in why.conditions if c not in met.conditions]
    return Conflict(failing, freed_by, cause, carrier, why.stepped, loop, entry, root_defs,
                    _function_of(read) if read is not None else None, consumer_stepped,
                    only_freeing[-1] if only_freeing else None, met.retained_by,
                    decorators if cause is Cause.MEMOIZED else (), masked=met.masked,
                    # Read to change the weights (SAM's ascent step) is no reading of the result.
                    grads_read=why.grads_read and not why.stepped,
                    written=why.written if why.by_step else None,
                    shared_step=why.by_step and why.written is None and _shared_step(program, why.stepped),
                    objects=met.objects)


def _shared_step(program: Program, stepped: frozenset[str]) -> bool:
    """Whether an optimizer other than those stepped between the two calls (every module it updates is
    one of `stepped`) also updates a module the step changed: the program trains those parameters from
    both losses (each task's optimizer over a shared encoder)."""
    return any(not names <= stepped and any(owns(a, frozenset({b})) or owns(b, frozenset({a}))
                                            for a in names for b in stepped)
               for names in program.stepping_groups.values())


def _state_like(read: Read, grown: frozenset[tuple[str, ...]] | set[tuple[str, ...]] = frozenset()) -> bool:
    """Kept across iterations: a container, a holder updated from itself, or a tensor that in-place
    writes from a graph keep growing (`grown`: a memory bank written item by item)."""
    return read.shape == "container" or read.holder.key in grown \
        or any(_self_update(d, read.holder.text)[0] for d in read.defs)


def _fed_stepped(program: Program, freed_by: CallInfo, read: Read, stepped: frozenset[str]) -> bool:
    """Whether the holder `read` reads went, in the freeing call's graph, into a module an optimizer
    stepped after it."""
    behind = program.call_reads.get(freed_by, ())
    first_reads = tuple(r for r in behind if outermost(r).holder.key == read.holder.key)
    return bool(first_reads) and bool(fed_reads(behind, first_reads, stepped, program.weighted))


def _best_boundary(boundary: list[Boundary], reinitialised: Callable[[Read], bool] | None = None,
                   failing: CallInfo | None = None,
                   grown: frozenset[tuple[str, ...]] | set[tuple[str, ...]] = frozenset()) -> Boundary | None:
    """The carrier to name: a state variable or a container kept across iterations if one of the
    stale values came through one (one the loop does not set afresh each iteration first), else the
    first stale value met walking back from the root."""
    if not boundary:
        return None

    def lasting(read: Read) -> bool:
        # Outlives a call: an attribute, or a variable of the failing call's function (`x = layer(x)`
        # in a forward, or a state threaded through a cell's parameter, is made afresh by every call).
        return read.holder.kind == "attribute" or (
            failing is not None and getattr(read.function, "qualname", "<module>") == failing.function)

    fallback: Boundary | None = None
    if any(lasting(outermost(found.read)) for found in boundary):
        # A state of the calls made inside the iteration is named only when no lasting holder carried it.
        boundary = sorted(boundary, key=lambda found: not lasting(outermost(found.read)))
    for found in boundary:
        read = outermost(found.read)
        if _state_like(read, grown):
            if reinitialised is None or not reinitialised(read):
                return found
            fallback = fallback or found
    for found in boundary:
        # The stale value came through a holder updated from itself on the way (`self.ema[idx] =
        # m * self.ema[idx] + (1 - m) * per_sample`): that holder carried it, not the value read
        # where it was made. Only a holder that outlives a call does (an attribute, or a variable of
        # the failing call's function): `x = layer(x)` in a forward is made afresh by every call.
        for read in reversed(found.crossed):
            holder = outermost(read)
            if lasting(holder) and _state_like(holder, grown) and (reinitialised is None or not reinitialised(holder)):
                return replace(found, read=read)
    return fallback or boundary[0]


def _produced_by_another_model(program: Program, read: Read | None, first_reads: tuple[Read, ...],
                               stepped: frozenset[str]) -> bool:
    """A GAN's fake batch comes from a generator with an optimizer of its own; a shared trunk's
    features (actor-critic, multi-task) do not need that to be a GAN, and an optimizer stepped in
    between that updates the producer too (an autoencoder's encoder and decoder) makes none."""
    producers = {r.producer for r in (read, *first_reads) if r is not None and r.producer}
    if not producers:
        return True
    if any(owns(name, producers) for name in stepped if not name.startswith("?")):
        return False
    if sum(owner.startswith("?") for owner in program.optimizer_owners) >= 2:
        # Two optimizers whose modules are not known (arguments of a `train` function): one of
        # them may well update the producer.
        return True
    owners = {name for owner in program.optimizer_owners
              for name in (owner, *program.owner_aliases.get(owner, ()))}
    # `self.vae.dec` made inside the VAE's forward belongs to the optimizer of `vae.parameters()`.
    return any(owns(owner, frozenset({producer})) for owner in owners for producer in producers)


def _settled(program: Program, reads: tuple[Read, ...], between: frozenset[str], after: frozenset[str]) -> bool:
    """Whether the modules that made what the reads read (`Carrier.settled`) are updated by optimizers
    stepped between the two calls only: some stepped between, every known optimizer of them did,
    none stepped after the failing call."""
    producers = frozenset(r.producer for r in reads if r.producer)
    if not producers or not between or any(owner.startswith("?") for owner in (*between, *after)):
        return False
    # An optimizer of the producer, of a module inside it (`critic.trunk`) or of one holding it.
    updating = {owner for owner in program.optimizer_owners if not owner.startswith("?")
                and any(owns(name, producers) or any(owns(p, frozenset({name})) for p in producers)
                        for name in _names_of(program, owner))}
    return bool(updating) and all(owner in between and owner not in after for owner in updating)


def _names_of(program: Program, owner: str) -> frozenset[str]:
    """The names a module an optimizer updates goes by: its own, its aliases, and those of the
    object it is an attribute of (`critic.trunk` is `self.critic.trunk` where `critic` is `self.critic`)."""
    names = {owner, *program.owner_aliases.get(owner, ())}
    parts = owner.split(".")
    for cut in range(1, len(parts)):
        root, rest = ".".join(parts[:cut]), ".".join(parts[cut:])
        names.update(f"{alias}.{rest}" for alias in program.owner_aliases.get(root, ()))
    return frozenset(names)


def _within(program: Program, facts: FileFacts, node: cst.CSTNode, container: cst.CSTNode) -> bool:
    """Whether `node` sits inside `container` (in the linted file or a project module it loaded)."""
    parent = facts.parent
    if facts.parent(node) is None:
        for info in program.loaded_modules:
            if node in info.parents:
                parent = info.parents.get
                break
    current: cst.CSTNode | None = node
    while current is not None:
        if current is container:
            return True
        current = parent(current)
    return False


def _guarded(program: Program, facts: FileFacts, statements: tuple[cst.CSTNode, ...]) -> bool:
    """Whether an assignment sits under an `if` in its function (`if self.cache is None: ...`)."""
    for statement in statements:
        parent = facts.parent
        if facts.parent(statement) is None:
            for info in program.loaded_modules:
                if statement in info.parents:
                    parent = info.parents.get
                    break
        current = parent(statement)
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.Module)):
            if isinstance(current, cst.If):
                return True
            current = parent(current)
    return False


def stepped_reads(reads: tuple[Read, ...], stepped: frozenset[str], weighted: set[str]) -> list[Read]:
    """The reads (following each out to its callers) that fed a module an optimizer then stepped:
    in a GAN, where the fake batch went into the discriminator. Where the optimizer's modules are
    not known, any module with parameters of its own (`weighted`) other than the one that made the
    value."""
    found: list[Read] = []
    unknown_owner = any(owner.startswith("?") for owner in stepped)
    for read in reads:
        current: Read | None = read
        while current is not None:
            if current.consumer is not None and (current.consumer in stepped or (
                    unknown_owner and current.producer is not None and current.consumer != current.producer
                    and current.consumer in weighted)):
                if current not in found:
                    found.append(current)
                break
            current = current.outer
    return found


def fed_reads(behind: tuple[Read, ...], first_reads: tuple[Read, ...], stepped: frozenset[str],
              weighted: set[str]) -> list[Read]:
    """`stepped_reads` of the carrier's own reads; failing those, the reads behind the freeing call
    of values computed from the carrier (they hold its nodes) that fed a stepped module."""
    found = stepped_reads(first_reads, stepped, weighted)
    if found or not first_reads:
        return found
    carried = frozenset().union(*(r.nodes for r in first_reads))
    producer = next((r.producer for r in first_reads if r.producer), None)
    # What was computed from the carrier comes from the carrier's producer (the generator).
    derived = tuple(r if r.producer else replace(r, producer=producer)
                    for r in behind if r not in first_reads and r.nodes & carried)
    return stepped_reads(derived, stepped, weighted)


def outermost(read: Read) -> Read:
    """Follow a parameter's read out to the caller's variable it was passed as."""
    while read.outer is not None:
        read = read.outer
    return read


def _root_holder(failing: CallInfo):
    from gradguard.analysis.names import dotted
    from gradguard.analysis.values import Holder

    node = failing.root_node
    if isinstance(node, (cst.Name, cst.Attribute)):
        text = dotted(node)
        if text is not None:
            kind = "variable" if isinstance(node, cst.Name) else "attribute"
            return Holder(kind, (text,), text)
    return None


def _carrying_loop(failing: CallInfo, created_loops: tuple) -> cst.CSTNode | None:
    common = [loop for loop in failing.loops if loop in created_loops]
    return common[-1] if common else (failing.loops[-1] if failing.loops else None)


def _entry_statement(read: Read, loop: cst.CSTNode | None) -> cst.CSTNode | None:
    """The statement of the loop body (or of the function body) in which the carrier is read."""
    for owner, statement in read.chain:
        if owner is loop:
            return statement
    return read.chain[0][1] if read.chain else read.statement


def _qualname(function: object) -> str:
    """How `CallInfo.function` names the function a read happened in."""
    return getattr(function, "qualname", None) or "<module>"


def _function_of(read: Read) -> cst.FunctionDef | None:
    info = read.function
    node = getattr(info, "node", None)
    return node if isinstance(node, cst.FunctionDef) else None


def _root_definitions(program: Program, failing: CallInfo) -> tuple[cst.CSTNode, ...]:
    return tuple(program.root_defs.get(failing, ()))


def _needless_retains(program: Program) -> list[NeedlessRetain]:
    results = []
    seen: set[int] = set()
    for call, (nodes, _) in program.retains.items():
        if call in program.retains_needed or id(call.node) in seen or call.kind is not CallKind.BACKWARD:
            continue
        if all(node // GENERATIONS in program.synthetic for node in nodes):
            # Nothing is known of this graph but that it was backward-ed: no telling who needs it.
            continue
        if nodes & program.escaped or not nodes:
            continue
        if any(c.node is call.node for c in program.retains_needed):
            continue
        keyword = _retain_keyword(call.node)
        if keyword is None:
            continue
        seen.add(id(call.node))
        results.append(NeedlessRetain(call, keyword, bool(call.loops)))
    return results


def _picked_from(program: Program, read: Read) -> bool:
    """Whether a read of a container is the first argument of a call that picks some of its items at
    random (`random.sample(self.buffer, n)`)."""
    if read.expr in program.picked:
        return True
    if read.statement is None:
        return False
    found = False
    function = read.function
    imports = function.module.imports if function is not None and function.module is not None else program.imports

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            if node.args and node.args[0].value is read.expr:
                name = qualify(node.func, imports)
                fact = api.lookup(canonical(name)) if name is not None else None
                found = found or (fact is not None and fact.picks)

    walk(read.statement, Finder())
    return found


def _retain_keyword(node: cst.CSTNode) -> cst.Arg | None:
    if not isinstance(node, cst.Call):
        return None
    for arg in node.args:
        if (arg.keyword is not None and arg.keyword.value in K.RETAIN_GRAPH_KEYWORDS
                and isinstance(arg.value, cst.Name) and arg.value.value == "True"):
            return arg
    return None


def _kept_alive(program: Program) -> list[KeptAlive]:
    results = []
    for kept in program.accumulations.values():
        # Only a loss (something a backward started from) kept across iterations is a log that
        # holds graphs; lists of tensors the program goes on to use are its data.
        if kept.item_key not in program.root_holders:
            continue
        if kept.holder.key in program.backward_holders or kept.nodes & program.escaped:
            continue
        results.append(KeptAlive(kept.holder, kept.statement, kept.item, kept.container, kept.loop))
    return results


__all__ = ["Kind", "facts_of"]
