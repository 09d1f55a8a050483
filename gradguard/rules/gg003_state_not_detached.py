"""GG003: state carried from one iteration to the next without `.detach()`."""

from __future__ import annotations

import libcst as cst

from gradguard import causes as model
from gradguard import codemods
from gradguard.analysis.api.torch_functions import NO_GRAD_CONTEXT
from gradguard.analysis.facts import Cause, Conflict, FileFacts
from gradguard.analysis.state import class_of_owner
from gradguard.model import Edit
from gradguard.rules import ConflictRule, FixPlan, carrier_shape, periodic_in_loop, reassigned_state


_WRITE_BY_HAND = "Write into `{carrier}` under `torch.no_grad()`: what it stores should carry no graph"


def _writes_without_graph(facts: FileFacts, writes: tuple[cst.CSTNode, ...]) -> tuple[list[Edit], str | None]:
    """Each in-place write into the state, wherever it is (a method of a module beside the script),
    under `torch.no_grad()`: the values it stores stay the same, without the graph they came with."""
    edits = []
    for statement in writes:
        try:
            edit = codemods.under_context(facts, statement, NO_GRAD_CONTEXT)
        except KeyError:  # in no file the analysis read
            edit = None
        if edit is None:
            return [], _WRITE_BY_HAND
        edits.append(edit)
    return edits, _WRITE_BY_HAND


class StateNotDetached(ConflictRule):
    """A hidden state, a buffer or a list kept across iterations still holds last iteration's graph."""

    code = "GG003"
    causes = frozenset({Cause.LOOP_CARRIED})

    def fix(self, facts: FileFacts, conflict: Conflict, option: model.Option) -> FixPlan:
        edits, title = _fix(facts, conflict, option)
        return FixPlan(tuple(edits), title)


def _fix(facts: FileFacts, conflict: Conflict, option: model.Option) -> tuple[list[Edit], str | None]:
    carrier = conflict.carrier
    if carrier is None:
        return [], None
    if option.kind is model.FixKind.NO_GRAD:
        return _writes_without_graph(facts, carrier.assignments)
    name = carrier.holder.text
    if carrier.is_container and reassigned_state(conflict):
        # Its items may be tensors or tuples of them (one `(h, c)` per layer): only where the analysis
        # saw what every item is, or the displays assigned to it show it, is it detached item by item
        # (`.detach()` on a tuple would fail).
        items = carrier.items or codemods.item_shape(facts, name, conflict.failing.statement)
        holder = codemods.holder_expression(name)
        shape = carrier.container or ("dict" if codemods.assigned_shape(facts, name, conflict) == "dict" else "list")
        if items is None or holder is None or conflict.entry_statement is None:
            return [], ("Detach every tensor in `{carrier}` where it is carried into the next iteration "
                        "(a recursive `repackage_hidden(h)` helper handles nested tuples and lists)")
        entry = codemods.first_reading(facts, conflict.entry_statement, name)
        if _set_afresh_before(facts, entry, name):
            return [], _AFRESH
        detached = codemods.detached_as(facts, holder, shape, items, near=entry)
        return [codemods.insert_before(facts, entry, [f"{name} = {detached}"])], None
    if carrier.is_container and option.kind is model.FixKind.DETACH and carrier.sampled:
        added = " at " + ", ".join(facts.where(a) for a in carrier.assignments) if carrier.assignments else ""
        return [], (f"Store the tensors added to `{{carrier}}`{added} detached, or add them under "
                    "`torch.no_grad()`: the program samples from it, so emptying it would change what it trains on")
    if carrier.is_container:
        if conflict.failing.statement is None:
            return [], None
        if codemods.entries_rebound_in(facts.module, name):
            # Entries updated by key (`totals[name] += loss`): emptying it would break the next
            # update and every later read of a key; what it should keep is the program's choice.
            return [], ("Keep numbers in `{carrier}` (add `.item()` where its entries are updated) and "
                        "backward this step's losses, not what it holds")
        there = _named_at(facts, conflict, conflict.failing.statement)
        if there is None:
            return [], "Empty `{carrier}` after the backward that used it"
        return [codemods.insert_after(facts, conflict.failing.statement, [f"{there}.clear()"])], \
            "Empty `{carrier}` after the backward that used it"
    if option.kind is not model.FixKind.DETACH:
        # A torch.distributions object has no .detach(): it is rebuilt from fresh parameters instead.
        return [], "Rebuild `{carrier}` from fresh parameters in every iteration instead of carrying it"
    if conflict.entry_statement is None:
        return [], None
    if not facts.is_local(conflict.entry_statement):
        return _through_the_object(facts, conflict)
    shape = carrier_shape(facts, conflict)
    accumulated = carrier.augmented or (conflict.loop is not None and codemods.accumulated_in(conflict.loop, name))
    if shape == "tensor" and accumulated and codemods.assigned_shape(facts, name, conflict) is None:
        # An accumulator (`acc += x`) whose start value the syntax does not show: it may still be the
        # Python number it started as when the state is carried in (`acc = 0` before the loop).
        shape = "number"
    holder = codemods.holder_expression(name)
    entry = codemods.first_reading(facts, conflict.entry_statement, name)
    if _set_afresh_before(facts, entry, name):
        # Bound anew earlier in the same block (`per_sample = criterion(...)` before the loss that
        # reads it): nothing is carried in there, and a detach would cut this step's own loss.
        return [], _AFRESH
    detached = codemods.detached_as(facts, holder, shape, near=entry) if holder is not None else None
    if detached is None:
        return [], None
    line = f"{name} = {detached}"
    maybe_none = carrier.maybe_none or codemods.may_be_none_at(facts, entry, name)
    lines = [f"if {name} is not None:", f"    {line}"] if maybe_none else [line]
    failing = conflict.failing.statement
    loop = conflict.loop
    if failing is not None and loop is not None and facts.is_local(failing) and facts.is_local(loop) \
            and codemods.inside(facts, failing, loop) and periodic_in_loop(facts, failing) \
            and not _guarded_by_a_call(facts, failing):
        # The backward runs every few iterations (`if (i + 1) % k == 0:`), through all the steps
        # since the last one: the state is cut where that graph ends, after the update, not in every
        # iteration (which would backpropagate through one step only).
        block = list(getattr(facts.parent(failing), "body", ()))
        if block:
            return [codemods.insert_after(facts, block[-1], [line])], None
    return [codemods.insert_before(facts, entry, lines)], None


_AFRESH = ("Detach `{carrier}` where it is stored into state kept across steps: it is computed afresh each "
           "step, and detaching it there would cut this step's own loss")


def _set_afresh_before(facts: FileFacts, statement: cst.CSTNode, name: str) -> bool:
    """Whether a statement of `statement`'s block before it binds `name` from other values."""
    for earlier in getattr(facts.parent(statement), "body", ()):
        if earlier is statement:
            return False
        if name in codemods.target_texts(earlier) and not codemods.reads_name(earlier, name):
            return True
    return False


def _guarded_by_a_call(facts: FileFacts, statement: object) -> bool:
    """Whether a test that calls something (`if should_update():`, whose truth the syntax does not
    tie to a count of iterations) guards the statement within its loop."""
    current = facts.parent(statement)  # type: ignore[arg-type]
    while current is not None and not isinstance(current, (cst.For, cst.While, cst.FunctionDef)):
        if isinstance(current, cst.If) and codemods.calls_in(current.test):
            return True
        current = facts.parent(current)
    return False


def _through_the_object(facts: FileFacts, conflict: Conflict) -> tuple[list[Edit], str | None]:
    """State on an object whose class is in another module (`self.h` of a model imported from
    `lib`): detached from the loop, through the name the loop's code has for the object (`model`, a
    parameter of `train_epoch`; `self.model` of a trainer), before the first statement of the
    iteration that uses it (`model.h = model.h.detach()`), as the class's own method would at its
    start; in whichever module holds the loop. Nothing when no single name read in the loop holds
    that object."""
    carrier, loop = conflict.carrier, conflict.loop
    assert carrier is not None
    holder = carrier.holder
    if holder.kind != "attribute" or not holder.text.startswith("self.") or loop is None:
        return [], None
    try:
        home = facts.home(loop)
    except KeyError:
        return [], None
    owner = holder.key[0]
    # The names the analysis saw holding the object; else, in the linted file, the variables the
    # syntax shows assigned an instance of its class.
    names = [name for name, held in conflict.objects if held == owner]
    if not names and home is facts:
        names = codemods.instances_of(facts, class_of_owner(owner))
    used = [name for name in dict.fromkeys(names) if codemods.reads_name(loop, name.split(".")[0])
            and codemods.mentions(loop, name)]
    first = codemods.first_statement(loop.body)  # type: ignore[attr-defined]
    if len(used) != 1 or first is None:
        return [], None
    name = used[0] + holder.text[len("self"):]
    entry = next((s for s in loop.body.body if codemods.mentions(s, used[0])), first)  # type: ignore[attr-defined]
    expression = codemods.holder_expression(name)
    shape = carrier_shape(facts, conflict)
    detached = codemods.detached_as(home, expression, shape, near=entry) if expression is not None else None
    if detached is None:
        return [], None
    line = f"{name} = {detached}"
    lines = [f"if {name} is not None:", f"    {line}"] if carrier.maybe_none else [line]
    return [codemods.insert_before(home, entry, lines)], None


def _named_at(facts: FileFacts, conflict: Conflict, statement: cst.CSTNode) -> str | None:
    """The carrier as code at `statement` names it, through the one name that statement's function (or
    module) has for the object: `self.items` in the object's own methods, `buffer.items` in a loop
    that holds it as `buffer`; None when there is no such single name."""
    assert conflict.carrier is not None
    holder = conflict.carrier.holder
    if holder.kind != "attribute" or not holder.text.startswith("self."):
        return holder.text
    function = codemods.enclosing_function(facts.home(statement), statement)
    owner = holder.key[0]
    scope = function if function is not None else facts.home(statement).module
    names = [name for name, held in conflict.objects if held == owner and codemods.mentions(scope, name)]
    names = list(dict.fromkeys(names))
    return names[0] + holder.text[len("self"):] if len(names) == 1 else None
