"""The rules: one module per rule (`ggNNN_<name>.py`), each holding one `Rule` subclass.

Rules never walk the syntax tree themselves. They read the facts the analysis computed once per file
(`gradguard.analysis.facts.FileFacts`) and turn the ones they own into diagnostics with fixes.
The registry builds itself by importing every module of this package.
"""

from __future__ import annotations

import bisect
import importlib
import pkgutil
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cache
from typing import ClassVar

import libcst as cst

from gradguard import catalogue, codemods
from gradguard import causes as model
from gradguard.analysis import api
from gradguard.analysis.api import Receiver, Returns
from gradguard.analysis.api.torch_functions import NO_GRAD_CONTEXT
from gradguard.analysis.facts import CallKind, Cause, Conflict, FileFacts
from gradguard.analysis.names import dotted
from gradguard.analysis.values import Read, of_parameters
from gradguard.model import Applicability, Diagnostic, Edit, Fix, Related, Span


class Rule:
    """Base class of a rule: a code, its document, and `check`, which reports from facts."""

    code: ClassVar[str]

    @property
    def doc(self) -> catalogue.RuleDoc:
        """This rule's document in the catalogue."""
        return catalogue.get(self.code)

    def check(self, facts: FileFacts) -> Iterator[Diagnostic]:
        """Yield this rule's findings for one file."""
        raise NotImplementedError

    def check_unanalysed(self, source: str) -> Iterator[Diagnostic]:
        """Yield this rule's findings for a file the analysis skips because it runs no backward: none,
        except for a rule that reads the text alone (GG100's directives)."""
        return iter(())

    def decisions(self, facts: FileFacts) -> Iterator[Decision]:
        """For each finding of `check`, the cause and the fix kind the shared cause model chose."""
        return iter(())

    def report(self, facts: FileFacts, node: object, *, related: list[Related] | None = None,
               edits: list[Edit] | None = None, applicability: Applicability | None = None,
               fix_title: str | None = None, note: str | None = None, masked: bool = False,
               **fields: str) -> Diagnostic:
        """A finding at `node`, worded from the rule's document, with an optional fix; `masked`: worded
        for a call that does not fail because `retain_graph=True` keeps the stale graph alive."""
        doc = self.doc
        fix = None
        if edits:
            title = (fix_title or doc.fix_title).format(**fields)
            others = sorted({facts.shown_path(edit.path) for edit in edits if edit.path is not None})
            if others:
                title += f" (in {', '.join(others)})"
            fix = Fix(title, applicability or doc.fix_applicability, tuple(edits))
        message = (doc.masked_message if masked and doc.masked_message else doc.message).format(**fields)
        diagnostic = Diagnostic(
            code=self.code,
            message=message + (f" ({note})" if note else ""),
            span=facts.span(node),  # type: ignore[arg-type]
            severity=doc.severity,
            fix=fix,
            related=tuple(related or ()),
        )
        return diagnostic


@dataclass(frozen=True)
class FixPlan:
    """What a rule proposes for one finding: its edits, and how to title and rate them when that
    differs from the rule's document."""

    edits: tuple[Edit, ...] = ()
    title: str | None = None
    applicability: Applicability | None = None


@dataclass(frozen=True)
class Decision:
    """What the cause model decided for one finding: its rule, where, why, the kind of fix, and the
    carrier as the finding names it (what the runtime monitor names too)."""

    code: str
    span: Span
    cause: model.Cause
    kind: model.FixKind
    carrier: str = ""


# The analysis's causes in the terms of the shared model (a list carried across iterations is COLLECTED).
_MODEL_CAUSE = {
    Cause.SAME_ROOT: model.Cause.REPEATED,
    Cause.SHARED_FORWARD: model.Cause.SHARED_FORWARD,
    Cause.GAN_REUSE: model.Cause.GAN_FAKE,
    Cause.GRAD_FREED: model.Cause.GRAD_FREED,
    Cause.LOOP_CARRIED: model.Cause.LOOP_CARRIED,
    Cause.ACCUMULATED: model.Cause.ACCUMULATED,
    Cause.BUILT_BEFORE_LOOP: model.Cause.OUTSIDE_LOOP,
    Cause.MEMOIZED: model.Cause.MEMOIZED,
    Cause.FRAMEWORK: model.Cause.FRAMEWORK,
    Cause.STEPPED: model.Cause.STEPPED,
}


def model_cause(facts: FileFacts, conflict: Conflict) -> model.Cause:
    """The shared model's cause of a conflict the analysis found."""
    if conflict.cause is Cause.LOOP_CARRIED and conflict.carrier is not None and conflict.carrier.is_container \
            and not reassigned_state(conflict):
        return model.Cause.COLLECTED
    # A cause the shared model does not know yet gets the model's generic advice, never a crash.
    return _MODEL_CAUSE.get(conflict.cause, model.Cause.UNKNOWN)


def reassigned_state(conflict: Conflict) -> bool:
    """A container the loop assigns anew each iteration (`out, state = model(x, state)`): a recurrent
    state made of several tensors, not a collection that only grows."""
    carrier, loop = conflict.carrier, conflict.loop
    if carrier is None or loop is None:
        return False
    # A state of several tensors kept in one dict or list whose entries the loop rebinds
    # (`state["h"] = cell(x, state["h"])`) is state too: emptying it would lose it.
    # So is one that a statement the graph reached it through computes anew from itself, in a method
    # the loop calls (`out, self.states = self.model(x, self.states)`): appending never rebinds it.
    holder = carrier.holder.text
    return codemods.rebound_in(loop, {holder}) or bool(codemods.entries_rebound_in(loop, holder)) \
        or any(holder in codemods.target_texts(s) and codemods.reads_name(s, holder) for s in carrier.assignments)


class ConflictRule(Rule):
    """A rule that reports the conflicts of some causes at the failing call, with a fix.

    The shared cause model (`gradguard.causes`) picks the fix kind from the evidence of the conflict;
    the rule's `fix` builds the edits of that kind, or none when it cannot build them soundly.
    """

    causes: ClassVar[frozenset[Cause]]
    # Whether a call of this file that fails inside another module's helper gets the fix that
    # module's code would get (`_remote_fix`); False where the failing call there is not the cause.
    remote_fixes: ClassVar[bool] = True

    def decide(self, facts: FileFacts, conflict: Conflict) -> model.Option:
        """The fix option the cause model chooses for this conflict."""
        return model.choose(model_cause(facts, conflict), evidence(facts, conflict))

    def decisions(self, facts: FileFacts) -> Iterator[Decision]:
        for conflict in facts.conflicts:
            if conflict.cause in self.causes and self.applies(conflict):
                try:
                    kind = self.decide(facts, conflict).kind
                except KeyError:  # the evidence lies in another module
                    kind = model.fix_kind(model_cause(facts, conflict), model.Evidence())
                yield Decision(self.code, facts.span(conflict.failing.node), model_cause(facts, conflict), kind,
                               carrier_name(conflict))

    def check(self, facts: FileFacts) -> Iterator[Diagnostic]:
        for conflict in facts.conflicts:
            if conflict.cause in self.causes and self.applies(conflict):
                try:
                    plan = self.fix(facts, conflict, self.decide(facts, conflict))
                except KeyError:
                    # The fix would mix this file's code with another module's in a way no rule builds.
                    plan = FixPlan()
                if not plan.edits and conflict.remote_failing is not None:
                    plan = self._remote_fix(facts, conflict) or plan
                edits = [] if any(_repeats(facts, edit) for edit in plan.edits) else list(plan.edits)
                fields = self.fields(facts, conflict)
                diagnostic = self.report(facts, conflict.failing.node, related=conflict_related(facts, conflict),
                                         edits=edits, fix_title=plan.title, applicability=plan.applicability,
                                         note=condition_note(facts, conflict), masked=conflict.masked, **fields)
                if not plan.edits and plan.title:
                    # No edit is sound here: the finding says in words what to do.
                    by_hand = plan.title.format(**fields)
                    diagnostic = replace(diagnostic, message=f"{diagnostic.message} (fix by hand: {by_hand})")
                yield diagnostic

    def _remote_fix(self, facts: FileFacts, conflict: Conflict) -> FixPlan | None:
        """For a call of this file that fails inside another module's helper (whose loop carries the
        state, whose grad frees the graph): the fix built there, as if that module were linted, its
        edits naming that file. None when there is none."""
        assert conflict.remote_failing is not None
        if not self.remote_fixes:
            return None
        remote = replace(conflict, failing=conflict.remote_failing,
                         carrier=conflict.remote_carrier or conflict.carrier, remote_failing=None, remote_carrier=None)
        try:
            home = facts.home(remote.failing.node)
            plan = self.fix(home, remote, self.decide(home, remote))
        except KeyError:
            return None
        return plan if plan.edits else None

    def applies(self, conflict: Conflict) -> bool:
        """Whether this rule reports a conflict of one of its causes (all of them by default)."""
        return True

    def fields(self, facts: FileFacts, conflict: Conflict) -> dict[str, str]:
        """The values the document's message and fix title are formatted with."""
        return {"carrier": carrier_name(conflict), "line": freed_row(facts, conflict),
                "root": conflict.failing.root_text, "first": conflict.freed_by.root_text}

    def fix(self, facts: FileFacts, conflict: Conflict, option: model.Option) -> FixPlan:
        """The fix of the chosen kind for one conflict (none by default)."""
        return FixPlan()


def evidence(facts: FileFacts, conflict: Conflict) -> model.Evidence:
    """What the dataflow facts and the source say about a conflict, as the cause model's evidence."""
    failing, freed = conflict.failing, conflict.freed_by
    same_call = failing.node is freed.node
    grads_read = False
    if not same_call and facts.is_local(freed.statement) and facts.is_local(failing.statement):
        start, end = facts.span(freed.statement).end.row, facts.span(failing.statement).start.row
        rows = facts.rows_matching(_reads_grads)
        index = bisect.bisect_right(rows, start)
        grads_read = index < len(rows) and rows[index] < end
    closure = conflict_closure(facts, conflict)
    return model.Evidence(
        shape=carrier_shape(facts, conflict),
        same_call=same_call,
        stepped_between=bool(conflict.stepped),
        grads_read_between=grads_read or conflict.grads_read,
        periodic=failing.statement is not None and periodic_in_loop(facts, failing.statement),
        summed_in_inner_loop=summed_in_inner_loop(facts, conflict),
        outside_loop=same_call or closure is not None,
        grad_feeds_loss=grad_feeds_later_code(facts, conflict),
        sampled=conflict.carrier is not None and conflict.carrier.sampled,
        settled_input=conflict.carrier is not None and conflict.carrier.settled,
        frozen_source=conflict.carrier is not None and conflict.carrier.untrained,
        reference_only=conflict.carrier is not None and conflict.carrier.reference is True,
        written_in_place=written_in_place(conflict) and not (
            conflict.carrier is not None and conflict.carrier.written_into_loss),
        shared_parameters=conflict.shared_step,
        # A module's parameters changed in place are a step by hand (`p.sub_(lr * p.grad)`), no write
        # of a tensor the program could make out of place.
        overwritten=conflict.written is not None and not of_parameters(conflict.written),
        guarded_apart=not same_call and facts.is_local(freed.statement) and facts.is_local(failing.statement)
        and codemods.enclosing_function(facts, freed.statement) is codemods.enclosing_function(facts, failing.statement)
        and model.guarded_apart(branches_around(facts, freed.statement), branches_around(facts, failing.statement)),
    )


NO_GRAD_BY_HAND = ("Compute `{carrier}` without a graph where it is made (under `no_grad()`, or `.detach()` it "
                    "there): nothing should go back through it")


def single_assignment(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
        and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1


def assigns_none(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, cst.Assign) and isinstance(small.value, cst.Name) and small.value.value == "None"
        for small in statement.body)


def computed_without_graph(facts: FileFacts, conflict: Conflict) -> tuple[list[Edit], str | None]:
    """A snapshot (a loss's target, the old side of a ratio) or the output of modules no optimizer
    of the loop trains (a teacher): computed without a graph where it is made, so that every
    iteration reads the same values as before and none goes back through it. The statement that
    assigns only the carrier runs under `torch.no_grad()` (batch-norm statistics and random draws
    happen as before); one that assigns other values too is followed by a detach of the carrier alone.
    None when the carrier has several assignments, or one in another module or of another shape."""
    carrier = conflict.carrier
    assignments = [a for a in carrier.assignments if not assigns_none(a)] if carrier is not None else []
    if carrier is None or len(assignments) != 1 or not facts.is_local(assignments[0]) \
            or not single_assignment(assignments[0]):
        return [], NO_GRAD_BY_HAND
    definition = assignments[0]
    name = carrier.holder.text
    assign = definition.body[0]  # type: ignore[attr-defined]
    targets = codemods.target_texts(definition)
    if targets == [name] and isinstance(assign.targets[0].target, (cst.Name, cst.Attribute)):
        edit = codemods.under_context(facts, definition, NO_GRAD_CONTEXT)
        if edit is None:
            return [], NO_GRAD_BY_HAND
        context = codemods.spelled(facts, NO_GRAD_CONTEXT)
        return [edit], f"Compute `{{carrier}}` under `{context}()`: nothing should go back through it"
    if name not in targets:
        return [], NO_GRAD_BY_HAND
    detached = model.detach_code(name, carrier_shape(facts, conflict))
    if detached is None:
        return [], NO_GRAD_BY_HAND
    return [codemods.insert_after(facts, definition, [f"{name} = {detached}"])], \
        "Detach `{carrier}` where it is made: nothing should go back through it"


def written_in_place(conflict: Conflict) -> bool:
    """Whether the carrier is state the program only writes into in place: every statement that sets
    it is a chain of in-place tensor methods (`buf.mul_(m).add_(x)`, `bank.index_copy_(0, i, v)`,
    `tp.copy_(...)` over its parameters) or an item assignment (`bank[idx] = v`); none rebinds it."""
    carrier = conflict.carrier
    if carrier is None or not carrier.assignments or carrier.is_container:
        return False
    return all(_writes_in_place(statement) for statement in carrier.assignments)


def _writes_in_place(statement: cst.CSTNode) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    if isinstance(small, cst.Assign):
        return all(isinstance(t.target, cst.Subscript) for t in small.targets)
    if not isinstance(small, cst.Expr) or not isinstance(small.value, cst.Call):
        return False
    call: cst.BaseExpression = small.value
    while isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
        fact = api.method(call.func.attr.value, Receiver.TENSOR)
        if fact is None or not fact.inplace or fact.cuts is not None:
            return False
        call = call.func.value
    return not isinstance(call, cst.Call)


def summed_in_inner_loop(facts: FileFacts, conflict: Conflict) -> bool:
    """Whether the carrier is added to inside a loop nested in the loop around the failing call, one
    that does not contain that call (`for t in range(T): loss += ...` then `loss.backward()`)."""
    carrier, failing = conflict.carrier, conflict.failing.statement
    if carrier is None or failing is None or not facts.is_local(failing):
        return False
    around = facts.parent(failing)
    while around is not None and not isinstance(around, (cst.For, cst.While, cst.FunctionDef)):
        around = facts.parent(around)
    if not isinstance(around, (cst.For, cst.While)):
        return False
    for statement in carrier.assignments:
        if not facts.is_local(statement):
            continue
        current = facts.parent(statement)
        while current is not None and current is not around and not isinstance(current, cst.FunctionDef):
            if isinstance(current, (cst.For, cst.While)) and not codemods.inside(facts, failing, current):
                return codemods.inside(facts, current, around)
            current = facts.parent(current)
    return False


def branches_around(facts: FileFacts, statement: cst.CSTNode) -> list[str]:
    """The branches a statement runs under in its function (`causes.branch_test`), `not (...)` for the
    `else` arm (or an `elif` further down)."""
    found: list[str] = []
    child, current = statement, facts.parent(statement)
    while current is not None and not isinstance(current, (cst.FunctionDef, cst.Module)):
        if isinstance(current, cst.If):
            test = model.branch_test(facts.code(current.test), codemods.calls_in(current.test),
                                     facts.span(current).start.row)
            found.append(test if child is current.body else f"not ({test})")
        child, current = current, facts.parent(current)
    return found


def _reads_grads(line: str) -> bool:
    return model.reads_grads([line])


def periodic_in_loop(facts: FileFacts, statement: cst.CSTNode) -> bool:
    """Whether a statement runs under conditions of its innermost loop that change from one iteration
    to the next (`if (step + 1) % k == 0:`), as the cause model judges them from their text."""
    tests: list[str] = []
    current = facts.parent(statement)
    while current is not None and not isinstance(current, (cst.For, cst.While, cst.FunctionDef)):
        if isinstance(current, cst.If):
            tests.append(facts.code(current.test))
        current = facts.parent(current)
    if not tests:
        return False
    bound = codemods.bound_names(current) if isinstance(current, (cst.For, cst.While)) else set()
    return model.varies_per_iteration(tests, bound)


def simple_definitions(conflict: Conflict) -> list[cst.SimpleStatementLine]:
    """The one-assignment statements that computed the failing call's root."""
    return [d for d in conflict.root_definitions if isinstance(d, cst.SimpleStatementLine)
            and len(d.body) == 1 and isinstance(d.body[0], (cst.Assign, cst.AnnAssign))]


def conflict_closure(facts: FileFacts, conflict: Conflict) -> cst.FunctionDef | None:
    """An optimizer closure (LBFGS) that backward-s a loss computed once outside it, next to it."""
    failing = conflict.failing.statement
    if failing is None:
        return None
    definitions = simple_definitions(conflict)
    function = codemods.enclosing_function(facts, failing)
    if len(definitions) == 1 and function is not None and not codemods.inside(facts, definitions[0], function) \
            and facts.parent(function) is facts.parent(definitions[0]):
        return function
    return None


def grad_feeds_later_code(facts: FileFacts, conflict: Conflict) -> bool:
    """Whether what a `torch.autograd.grad` call returned is used between it and the failing call."""
    if conflict.freed_by.kind is not CallKind.GRAD:
        return False
    grad_statement, failing = conflict.freed_by.statement, conflict.failing.statement
    names = codemods.target_names(grad_statement)
    if grad_statement is None or failing is None or not names:
        return bool(names)
    if not facts.is_local(grad_statement):
        # The grad runs in a helper of another module: what it returned feeds a loss when the rest of
        # the helper uses it as a tensor (`return (g.norm(2, dim=1) - 1).pow(2).mean()`), not when it
        # only reports it or turns it into a number (`return g.norm().item()`).
        home = facts.home(grad_statement)
        helper = codemods.enclosing_function(home, grad_statement)
        if helper is None:
            return True
        return codemods.read_in_rows(home, names, home.span(grad_statement).end.row, home.span(helper).end.row,
                                     _reports, _cuts)
    start, end = facts.span(grad_statement).end.row, facts.span(failing).start.row
    if end <= start:
        return True
    return codemods.read_in_rows(facts, names, start, end, _reports)


def _cuts(call: cst.Call) -> bool:
    """A tensor method whose result leaves the graph (a Python number, a detached tensor)."""
    if not isinstance(call.func, cst.Attribute):
        return False
    fact = api.method(call.func.attr.value, Receiver.TENSOR)
    return fact is not None and fact.returns in (Returns.VALUE, Returns.CUT)


def _reports(call: cst.Call) -> bool:
    """A call that only shows what it is given: a print or a logger (`print(g)`, `self.log("g", g)`)."""
    func = call.func
    if isinstance(func, cst.Attribute):
        logged = api.method(func.attr.value, Receiver.LIGHTNING)
        if logged is not None and logged.returns is Returns.NONE and logged.stores is None:
            return True
    name = dotted(func)
    fact = api.lookup(name) if name is not None else None
    return fact is not None and fact.receiver is None and fact.returns is Returns.NONE \
        and fact.backward is None and fact.stores is None


def carrier_shape(facts: FileFacts, conflict: Conflict) -> str:
    """What the carrier holds, from the analysis (tuple, container) and, where the model has no fact
    for it, from the syntax of its assignments: a number literal, a dict display, a distribution."""
    carrier = conflict.carrier
    if carrier is None:
        return "tensor"
    syntactic = codemods.assigned_shape(facts, carrier.holder.text, conflict)
    if carrier.is_tuple:
        return "tuple"
    if carrier.is_container:
        return "dict" if syntactic == "dict" else "list"
    return syntactic or ("state" if carrier.shape_unknown else "tensor")


def read_shape(facts: FileFacts, conflict: Conflict, read: Read) -> str:
    """What one read of the carrier holds, as a detach of it is spelled: a tuple where that read
    took a tuple (a discriminator's `(logits, features)`), else the carrier's shape."""
    return "tuple" if read.shape == "tuple" else carrier_shape(facts, conflict)


def _repeats(facts: FileFacts, edit: Edit) -> bool:
    """An insertion of lines that already stand right there: the same fix was applied before and
    did not resolve the finding, so offering it again would only repeat it."""
    if edit.span.start != edit.span.end or not edit.content.endswith(("\n", "\r")):
        return False
    inserted = [line.strip() for line in edit.content.splitlines()]
    row = edit.span.start.row - 1
    before = [line.strip() for line in facts.lines[max(row - len(inserted), 0):row]]
    after = [line.strip() for line in facts.lines[row:row + len(inserted)]]
    return inserted in (before, after)


def conflict_related(facts: FileFacts, conflict: Conflict) -> list[Related]:
    """The places that explain a conflict: where the graph was freed, where the carrier was set."""
    related: list[Related] = []
    freeing = conflict.freed_by
    if not facts.is_local(freeing.node):
        pass
    elif freeing.kind is CallKind.STEP:
        # GG011: nothing was freed; the step changed in place what the retained graph saved.
        retained = conflict.retained_by
        if retained is not None and facts.is_local(retained.node):
            related.append(Related(facts.span(retained.node), "graph kept alive here by retain_graph=True"))
        changed = "saved parameters changed in place here by this optimizer step" if conflict.written is None \
            else f"`{conflict.written.text}`, which the graph saved, written in place here"
        related.append(Related(facts.span(freeing.node), changed))
    elif freeing.kind is not CallKind.FRAMEWORK and freeing.node is not conflict.failing.node:
        related.append(Related(facts.span(freeing.node), f"graph freed here by this {freeing.shown} (no retain_graph)"))
    elif freeing.node is conflict.failing.node:
        related.append(Related(facts.span(freeing.node), "graph freed here by this same call in the previous iteration"))
    carrier = conflict.carrier
    if carrier is not None:
        local = [s for s in carrier.assignments if facts.is_local(s)]
        for statement in sorted(local, key=lambda s: facts.span(s).start)[:2]:
            related.append(Related(facts.span(statement), f"`{carrier.holder.text}` assigned here"))
    return related


def condition_note(facts: FileFacts, conflict: Conflict) -> str | None:
    """When the freeing call runs only under a condition, the words that name it; when the failing
    call is in another module, where it is."""
    remote = conflict.remote_failing
    if remote is not None:
        where = facts.where(remote.node)
        called = f"the {remote.shown} at {where}, run by this call" if where else None
        branch = _condition_words(facts, conflict)
        return "; ".join(part for part in (called, branch) if part) or None
    return _condition_words(facts, conflict)


def _condition_words(facts: FileFacts, conflict: Conflict) -> str | None:
    if conflict.condition is None:
        return None
    branch, taken = conflict.condition
    test = getattr(branch, "test", None)
    if test is None:
        return None
    return f"it fails the first time `{facts.code(test)}` {'holds' if taken else 'does not hold'}"


def carrier_name(conflict: Conflict) -> str:
    """How a finding names the value that carried the stale graph: for two losses of one forward, with
    the other outputs of the same call that the failing loss reads (`(mu, logvar)`)."""
    carrier = conflict.carrier
    if carrier is None:
        return conflict.failing.root_text or "the loss"
    name = carrier.holder.text
    viewed = _viewed(carrier.assignments)
    if viewed is not None:
        return viewed
    if conflict.cause is Cause.SHARED_FORWARD and len(carrier.assignments) == 1:
        targets = codemods.target_names(carrier.assignments[0])
        read = set().union(*(codemods.read_names(d) for d in conflict.root_definitions)) if conflict.root_definitions \
            else set()
        return model.joint_carrier(name, targets, read)
    return name


def _viewed(assignments: tuple[cst.CSTNode, ...]) -> str | None:
    """`scores` for a carrier unpacked from views of it (`s_real, s_fake = scores.split(b)`): the
    graph hangs on the tensor they view, which is what the monitor finds and what the user holds."""
    if len(assignments) != 1 or len(codemods.target_names(assignments[0])) < 2:
        return None
    statement = assignments[0]
    value = statement.body[0].value if isinstance(statement, cst.SimpleStatementLine) \
        and isinstance(statement.body[0], cst.Assign) else None
    if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Attribute):
        return None
    method = api.method(value.func.attr.value, Receiver.TENSOR)
    if method is None or method.returns is not Returns.VIEW:
        return None
    return dotted(value.func.value)


def freed_row(facts: FileFacts, conflict: Conflict) -> str:
    """Where the call that freed the graph is, as messages say it ("line 12", "cell 3, line 4")."""
    freed = conflict.freed_by
    if freed.kind is CallKind.FRAMEWORK:
        if not facts.is_local(freed.node):
            return "the framework"
        # The framework's loop over batches: its backward of what the method returned last time.
        method = freed.function.rsplit(".", 1)[-1]
        return f"{facts.where(freed.node)} ({freed.root_text}'s, of what `{method}` returned for the previous batch)"
    return facts.where(freed.node)


@cache
def all_rules() -> tuple[Rule, ...]:
    """Every rule, in code order, discovered by importing the modules of this package."""
    found: list[Rule] = []
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("gg"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule:
                if value.__module__ == module.__name__:
                    found.append(value())
    return tuple(sorted(found, key=lambda rule: rule.code))


def decisions_for(source: str) -> list[Decision]:
    """What the cause model decided for every finding of one source text (rule, place, cause, fix
    kind), in the order of the findings: what a test compares with the runtime monitor's report."""
    from gradguard.analysis import facts_for

    facts = facts_for(source)
    if facts is None:
        return []
    found = [d for rule in all_rules() for d in rule.decisions(facts)]
    return sorted(found, key=lambda d: (d.span.start, d.code))


def recompute_before(facts: FileFacts, conflict: Conflict) -> tuple[list[Edit], str | None]:
    """The failing root computed again before the failing backward: inside an optimizer closure that
    backward-s what was computed once outside it (moved there when nothing else uses it), or with a
    new forward just before the backward."""
    failing = conflict.failing.statement
    if failing is None:
        return [], None
    definitions = sorted(simple_definitions(conflict), key=lambda d: facts.span(d).start)
    function = conflict_closure(facts, conflict)
    if function is not None:
        # An optimizer closure (LBFGS) re-evaluated with a loss computed outside it: the
        # computation moves into the closure (or is repeated there, if it is used elsewhere too).
        return into_closure(facts, definitions[0], failing, function), \
            "Compute `{root}` inside the closure, before its backward"
    if len(definitions) == 1:
        chain = codemods.definition_chain(facts, definitions[0])
        lines = [line for d in chain for line in codemods.statement_text(facts, d)]
        return [codemods.insert_before(facts, failing, lines)], \
            "Recompute `{root}` with a new forward pass before this backward"
    return [], "Recompute `{root}` with a new forward pass before this backward"


def into_closure(facts: FileFacts, definition: cst.CSTNode, before: cst.CSTNode,
                 closure: cst.FunctionDef) -> list[Edit]:
    """A computation made beside an optimizer closure (with the assignments before it that it needs),
    done inside the closure just before `before`; moved there when nothing after the closure uses it."""
    chain = codemods.definition_chain(facts, definition)
    lines = [line for d in chain for line in codemods.statement_text(facts, d, comments=True)]
    edits = [codemods.insert_before(facts, before, lines)]
    if not _used_elsewhere(facts, chain, closure):
        edits = [codemods.remove_statement(facts, d, comments=True) for d in chain] + edits
    return edits


def _used_elsewhere(facts: FileFacts, chain: list[cst.CSTNode], closure: cst.FunctionDef) -> bool:
    """Whether what the chain assigns is used in its block after it, other than by the closure."""
    block = facts.parent(chain[-1])
    body = list(getattr(block, "body", ()))
    if chain[-1] not in body:
        return True
    names = set().union(*(codemods.assigned_names(d) for d in chain))
    later = [s for s in body[body.index(chain[-1]) + 1:] if s is not closure]
    return any(codemods.reads_name(s, name) for s in later for name in names)
