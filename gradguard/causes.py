"""The one model of why a graph was backward-ed twice, shared by the lint rules and the runtime monitor.

Each cause has the rule that finds it before the program runs, the fix kinds that apply to it and
when (predicates over an `Evidence` record), and its texts. Lint fills the evidence from the dataflow
facts and the source around the two calls; the monitor from the graph, its call records and the same
source. Both then ask `fix_kind` and word the finding with `explanation`, so the two halves cannot
drift apart. Torch-free and libcst-free: plain data and text predicates.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum


class FixKind(StrEnum):
    """The shape of a fix (the `fix.kind` of a runtime report, the kind of edit a lint fix makes)."""

    DETACH = "detach"
    RETAIN_GRAPH = "retain_graph"
    SUM_LOSSES = "sum_losses"
    ITEM = "item"
    RECOMPUTE_IN_LOOP = "recompute_in_loop"
    NO_GRAD = "no_grad"  # compute the value without a graph where it is made (a snapshot, a teacher's output)
    CREATE_GRAPH = "create_graph"
    MOVE_STEP = "move_step"  # run every backward of the forward first, then the optimizer steps
    OTHER = "other"


class Cause(StrEnum):
    """Why a backward reached a graph that an earlier call freed (or why a graph is kept for nothing)."""

    LOOP_CARRIED = "loop-carried state"
    COLLECTED = "graph tensors collected across iterations"
    ACCUMULATED = "loss accumulated as a tensor"
    GAN_FAKE = "generator output reused"
    SHARED_FORWARD = "separate backward calls through a shared forward"
    OUTSIDE_LOOP = "graph built once, used every iteration"
    MEMOIZED = "graph cached on first use, reused afterwards"
    GRAD_FREED = "torch.autograd.grad freed the graph"
    REPEATED = "the same graph backward-ed again"
    FRAMEWORK = "the framework calls backward too"
    NEEDLESS_RETAIN = "retain_graph=True that nothing needs"
    KEPT_FOR_LOGGING = "loss tensors kept for logging"
    UNKNOWN = "stale graph"
    INPLACE = "tensor modified in place"
    STEPPED = "parameters changed by an optimizer step"


@dataclass(frozen=True)
class Evidence:
    """What one half knows about one finding, in terms both halves can fill.

    `shape` is what the carrier holds: "tensor", "tuple", "list", "dict", "number" (a float or int
    accumulator) or "distribution" (a torch.distributions object).
    """

    shape: str = "tensor"
    same_call: bool = False  # the failing call is the freeing call, one iteration later
    stepped_between: bool = False  # an optimizer stepped between the two calls
    grads_read_between: bool = False  # `.grad` read, copied or clipped between the two calls
    periodic: bool = False  # the failing backward runs under an `if` of its loop that changes per iteration
    # The accumulator is added to in a loop nested in the failing backward's (a sum over time steps
    # or micro-batches, backward-ed once per outer iteration): a per-iteration total.
    summed_in_inner_loop: bool = False
    outside_loop: bool = False  # the failing root was computed outside the loop or closure calling it
    grad_feeds_loss: bool = False  # what torch.autograd.grad returned is part of the later loss
    intended_second_pass: bool = False  # the program means to backward the same graph twice
    sampled: bool = False  # the collection is read by picking items at random: a store kept on purpose
    guarded_apart: bool = False  # the two calls sit under different branches: either can run alone
    # The shared value was made by modules that only the optimizers stepped between the two calls
    # update (an actor-critic's value in the actor's loss): the later loss reads it as a constant.
    settled_input: bool = False
    # What the value computed outside the loop was computed from is updated by none of the
    # optimizers stepped between the two calls (a teacher, a frozen encoder): no gradient into it is
    # wanted, so it is computed without a graph; computing it again would give the same values.
    frozen_source: bool = False
    # The later loss reads the value only as a reference it compares against: the target argument of
    # a loss, or one side of a difference or ratio whose other side is a fresh value of the module that
    # made it (PPO's `exp(new_log_probs - old_log_probs)`). It is a snapshot: computed again in the
    # loop it would follow every step (a ratio of one), so it is computed without a graph instead.
    reference_only: bool = False
    # The state is a tensor the program only ever writes into in place, never rebinds (a memory bank's
    # `index_copy_`, an EMA teacher's `mul_().add_()`, a running statistic's `mul_().add_()`): what it
    # writes should carry no graph, so the writes run under torch.no_grad().
    written_in_place: bool = False
    # The parameters the step between the two calls changed are trained by another optimizer of the
    # program too (a shared encoder that each task's optimizer updates): both losses' gradients are
    # meant to come from the same weights, so every backward runs before the steps.
    shared_parameters: bool = False
    # What changed under the graph is a tensor the program itself wrote in place (`hx[done] = 0.0` on
    # a state a layer saved), not parameters an optimizer stepped: the write is what must change.
    overwritten: bool = False


@dataclass(frozen=True)
class Option:
    """One fix kind of a cause, the condition under which it is the right one, and what it does."""

    kind: FixKind
    when: Callable[[Evidence], bool]
    summary: str


def _always(_: Evidence) -> bool:
    return True


@dataclass(frozen=True)
class CauseInfo:
    """A cause: its rule, its fix options (the first that applies wins) and its texts."""

    cause: Cause
    rule: str | None
    options: tuple[Option, ...]
    explanation: str  # formatted with {carrier}
    retain_note: str = ""


_WRONG = "retain_graph=True would be wrong here: "

_TWO_PASSES = Option(
    FixKind.RETAIN_GRAPH, lambda e: e.grads_read_between or e.intended_second_pass,
    "the gradients are read between the two backward calls, so both passes are wanted: pass "
    "retain_graph=True to the earlier ones")

CAUSES: dict[Cause, CauseInfo] = {info.cause: info for info in (
    CauseInfo(
        Cause.LOOP_CARRIED, "GG003",
        (Option(FixKind.RECOMPUTE_IN_LOOP, lambda e: e.shape == "distribution",
                "rebuild the distribution from fresh parameters in every iteration"),
         Option(FixKind.NO_GRAD, lambda e: e.written_in_place,
                "the program only writes into it in place (a memory bank, an EMA copy, a running "
                "statistic): write into it under torch.no_grad(), so that what it stores carries no graph"),
         Option(FixKind.DETACH, _always, "detach the state where it is carried into the next iteration, "
                "element by element for a tuple, list or dict")),
        "`{carrier}` is carried from one iteration to the next without .detach(), so each new graph is "
        "chained to the previous iteration's graph, which that iteration's backward already freed.",
        _WRONG + "it would keep the graph of every earlier iteration alive, so each backward runs through "
        "the whole history (slower every step) and memory grows until it runs out. Detaching keeps the "
        "value and cuts the graph at the iteration boundary (truncated backpropagation through time)."),
    CauseInfo(
        Cause.COLLECTED, "GG003",
        (Option(FixKind.DETACH, lambda e: e.sampled,
                "store what is added to the collection detached (or add it under torch.no_grad()): the "
                "program samples from it, so emptying it would change what it trains on"),
         Option(FixKind.OTHER, _always, "empty the collection after the backward that used it")),
        "tensors with their graphs are collected in `{carrier}` across iterations and never cleared, so a "
        "later backward reaches graphs that earlier iterations' backward calls freed.",
        _WRONG + "it would keep the graph behind every tensor ever added alive; memory grows every step "
        "and each backward goes through all earlier iterations again."),
    CauseInfo(
        Cause.ACCUMULATED, "GG004",
        (Option(FixKind.OTHER, lambda e: e.periodic or e.summed_in_inner_loop,
                "reset the accumulator right after the backward that consumes it"),
         Option(FixKind.ITEM, _always, "backward each step's loss and accumulate a Python number")),
        "`{carrier}` accumulates the loss tensors across steps, so backpropagating through it reaches every "
        "earlier step's graph, which earlier backward calls already freed.",
        _WRONG + "it keeps every step's graph alive inside the accumulator and backpropagates through all "
        "earlier losses again at each step: gradients are counted many times and memory grows every step."),
    CauseInfo(
        Cause.GAN_FAKE, "GG005",
        (Option(FixKind.DETACH, _always, "give the discriminator step the generated batch detached"),),
        "`{carrier}` (the generator's output) went into the discriminator's loss without .detach(); that "
        "backward freed the generator's graph, and the generator's loss needs it again.",
        _WRONG + "it would let the discriminator's loss send gradients into the generator and keep the "
        "generator's graph alive longer. The discriminator step must not train the generator."),
    CauseInfo(
        Cause.SHARED_FORWARD, "GG002",
        (_TWO_PASSES,
         Option(FixKind.DETACH, lambda e: e.stepped_between and e.settled_input,
                "the shared value comes from a module whose optimizer already stepped and that no later "
                "step updates: the second loss reads it detached"),
         Option(FixKind.RECOMPUTE_IN_LOOP, lambda e: e.stepped_between,
                "an optimizer stepped between the two backward calls: run the forward again (or detach the "
                "shared input) before the second loss"),
         Option(FixKind.RECOMPUTE_IN_LOOP, lambda e: e.same_call and e.outside_loop,
                "the same backward runs again (an optimizer's closure, a loop) on a new loss from a forward "
                "computed once outside it: compute that forward inside, before each loss"),
         Option(FixKind.RETAIN_GRAPH, lambda e: e.guarded_apart,
                "the two backward calls run under different conditions, so either can run without the "
                "other and no single backward on their sum says that: pass retain_graph=True to the earlier one"),
         Option(FixKind.SUM_LOSSES, _always, "one backward on the sum of the losses")),
        "`{carrier}` comes from one forward pass shared by two losses, each with its own backward: the first "
        "backward freed the shared part of the graph.",
        "retain_graph=True on the first backward would also work if the losses really need separate "
        "backward passes, at the cost of keeping the shared activations alive until the last one; no "
        "optimizer.step() may run in between (it changes the weights in place), and under "
        "DistributedDataParallel the sum is the safe choice."),
    CauseInfo(
        Cause.OUTSIDE_LOOP, "GG006",
        (Option(FixKind.NO_GRAD, lambda e: e.frozen_source,
                "no optimizer of the loop updates what it was computed from: compute it without a graph "
                "where it is made (under torch.no_grad())"),
         Option(FixKind.NO_GRAD, lambda e: e.reference_only,
                "the loss only compares against it (a target, the old side of a ratio): it is a snapshot, "
                "computed without a graph where it is made (under torch.no_grad())"),
         Option(FixKind.RECOMPUTE_IN_LOOP, _always, "compute it inside the loop, from fresh parameters")),
        "`{carrier}` was computed once, outside the loop, from tensors that require grad; the first backward "
        "freed its graph, and every later iteration uses it again.",
        _WRONG + "it keeps the precomputed graph alive and backpropagates through the same stale copy every "
        "step, while the parameters it was computed from change after each optimizer step."),
    CauseInfo(
        Cause.MEMOIZED, "GG006",
        (Option(FixKind.RECOMPUTE_IN_LOOP, _always, "rebuild the cached value on every call"),),
        "`{carrier}` was cached on first use from tensors that require grad; the first backward freed its "
        "graph, and every later use reads the same stale copy.",
        _WRONG + "it keeps the cached graph alive and backpropagates through the same stale copy every step."),
    CauseInfo(
        Cause.GRAD_FREED, "GG007",
        (Option(FixKind.CREATE_GRAPH, lambda e: e.grad_feeds_loss,
                "the gradient is part of the later loss: pass create_graph=True to torch.autograd.grad"),
         Option(FixKind.RETAIN_GRAPH, _always, "pass retain_graph=True to torch.autograd.grad")),
        "a torch.autograd.grad call ran without retain_graph or create_graph and freed the graph that the "
        "later call goes through again.",
        "retain_graph=True alone would stop the error but a term built from the gradient would be a "
        "constant with no gradient of its own; create_graph=True records the gradient computation."),
    CauseInfo(
        Cause.REPEATED, "GG001",
        (_TWO_PASSES,
         Option(FixKind.RECOMPUTE_IN_LOOP, lambda e: e.outside_loop or e.stepped_between,
                "run the forward again before each backward (inside the loop, or the optimizer's closure)"),
         Option(FixKind.OTHER, _always, "remove the repeated backward call")),
        "the same graph (`{carrier}`) is backpropagated a second time without running the forward again.",
        "retain_graph=True is right only when you mean to backpropagate twice through the same forward "
        "(gradients add up in .grad); a repeated call by accident should be removed instead."),
    CauseInfo(
        Cause.FRAMEWORK, "GG008",
        (Option(FixKind.OTHER, _always, "remove the manual backward: the framework runs it"),),
        "the training loop of the framework calls backward on the loss the step returns, after the step "
        "already called backward on `{carrier}` itself.",
        _WRONG + "it would run backward twice per step, doubling every gradient."),
    CauseInfo(
        Cause.STEPPED, "GG011",
        (Option(FixKind.NO_GRAD, lambda e: e.frozen_source,
                "no optimizer trains what it was computed from (a target network blended in place): compute "
                "it without a graph where it is made (under torch.no_grad())"),
         Option(FixKind.MOVE_STEP, lambda e: e.shared_parameters,
                "another optimizer trains the same parameters from the later loss: run both backward calls "
                "first (zero the gradients before the first), then the optimizer steps"),
         Option(FixKind.OTHER, lambda e: e.overwritten and not e.written_in_place,
                "write it out of place (`hx = hx * mask` instead of `hx[done] = 0`), or into a clone: the "
                "graph kept the tensor the write changes"),
         Option(FixKind.RECOMPUTE_IN_LOOP, _always,
                "run the forward again after the optimizer step, and stop retaining the old graph"),),
        "`{carrier}`'s graph was kept with retain_graph=True across an optimizer step, which changed in "
        "place the parameters that graph saved; the next backward through it reads the changed values.",
        _WRONG + "it is what kept the old graph alive across the step; the graph must be built again "
        "after the step, or both backward calls must run before it."),
    CauseInfo(
        Cause.NEEDLESS_RETAIN, "GG009",
        (Option(FixKind.OTHER, _always, "drop retain_graph=True"),),
        "retain_graph=True keeps `{carrier}`'s graph alive though no later backward goes through it."),
    CauseInfo(
        Cause.KEPT_FOR_LOGGING, "GG010",
        (Option(FixKind.ITEM, _always, "keep the loss's value with .item()"),),
        "`{carrier}` keeps loss tensors, with their graphs, across iterations only to log them."),
    CauseInfo(
        Cause.UNKNOWN, None,
        (Option(FixKind.OTHER, _always, "detach the reused tensor, or recompute it before the second call"),),
        "a tensor computed before an earlier backward is reused by this one.",
        "retain_graph=True silences this error but keeps the old graph alive; use it only when a second "
        "backward through the same graph is intended."),
    CauseInfo(
        # A tensor a node saved, written in place by the program: GG011 finds it before the run.
        Cause.INPLACE, "GG011",
        (Option(FixKind.OTHER, _always, "use the out-of-place form, or modify a clone"),),
        "", "retain_graph=True does not help: the saved value itself was overwritten."),
)}


def rule_for(cause: Cause) -> str | None:
    """The lint rule that finds this cause before the program runs."""
    return CAUSES[cause].rule


def choose(cause: Cause, evidence: Evidence) -> Option:
    """The fix option for a cause given the evidence: the first whose condition holds."""
    for option in CAUSES[cause].options:
        if option.when(evidence):
            return option
    return CAUSES[cause].options[-1]


def fix_kind(cause: Cause, evidence: Evidence) -> FixKind:
    """The kind of fix both halves propose for this cause and evidence."""
    return choose(cause, evidence).kind


def explanation(cause: Cause, carrier: str) -> str:
    """Why it happened, in one sentence naming the carrier."""
    return CAUSES[cause].explanation.format(carrier=carrier)


def retain_note(cause: Cause) -> str:
    """Why retain_graph=True is or is not the answer for this cause."""
    return CAUSES[cause].retain_note


# Text predicates both halves apply to the source between the two calls.

# A `.grad` read (not `autograd.grad(`, `zero_grad`, `requires_grad`). Clipping is left out: it is what
# one training step does between its backward and its step, and a copy-pasted second backward after it
# is a bug, not a second pass the program wants.
_GRAD_READ = re.compile(r"\.grad\b(?!\s*[(=])")
_STEP = re.compile(r"\.step\s*\(")


def _code(lines: Iterable[str]) -> list[str]:
    return [line.split("#", 1)[0] for line in lines]


# Only shown (a notebook's bare `w.grad`, a print or a log call): that is looking, not using them.
_SHOWN = re.compile(r"^\s*(?:[\w.\[\]]+\.grad\s*$|(?:print|display|log\w*|logger\.\w+)\s*\()")


def reads_grads(lines: Iterable[str]) -> bool:
    """Whether code uses parameters' gradients (`p.grad` copied, compared, stored or summed up)."""
    return any(_GRAD_READ.search(line) and not _SHOWN.match(line) for line in _code(lines))


def steps_optimizer(lines: Iterable[str]) -> bool:
    """Whether code calls an optimizer's (or scaler's) `step`."""
    return any(_STEP.search(line) for line in _code(lines))


def varies_per_iteration(tests: Iterable[str], bound_in_loop: Collection[str]) -> bool:
    """Whether one of the conditions around a call (their source text, from the call out to its loop)
    can change from one iteration to the next: it reads a name the loop binds (`(step + 1) % k`, a
    `done` flag set in the body) or calls something (`random.random() < p`). A flag set once before
    the loop (`if LOG:`) does not: the call then runs every iteration or never, not periodically."""
    for test in tests:
        try:
            tree = ast.parse(test.strip(), mode="eval")
        except SyntaxError:
            return True
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) or (isinstance(node, ast.Name) and node.id in bound_in_loop):
                return True
    return False


def joint_carrier(carrier: str, targets: Sequence[str], read: Collection[str]) -> str:
    """The carrier as the user names it, the same in lint and the monitor: with the other targets of
    the tuple assignment that made it (`recon, mu, logvar = model(x)`) that the failing loss reads
    too, in their order (`(mu, logvar)`: both outputs of one forward hold the shared graph); alone
    when it is the only one."""
    together = [target for target in targets if target in read]
    if carrier not in together or len(together) < 2:
        return carrier
    return f"({', '.join(together)})"


def detach_code(code: str, shape: str, items: str = "tensor", avoid: frozenset[str] = frozenset()) -> str | None:
    """`code` detached as what it holds, the same text in a lint fix and a monitor's report: a tensor
    (`code` already parenthesised where needed), each element of a tuple, list or dict (each of an
    element's tensors when the elements are (h, c) tuples: `items="tuple"`), a number left as it is
    when it may still be one; None for what has no `.detach()` (a distribution is rebuilt). The
    comprehension's own names are none of `avoid` (the names the code around it uses)."""
    taken = set(re.findall(r"[A-Za-z_]\w*", code)) | avoid

    def name(*choices: str) -> str:
        return next((c for c in choices if c not in taken), choices[-1] + "_")

    def one(element: str) -> str:
        inner = name("x", "y", "z")
        return f"tuple({inner}.detach() for {inner} in {element})" if items == "tuple" else f"{element}.detach()"

    if shape == "tuple":
        element = name("h", "t", "s")
        return f"tuple({one(element)} for {element} in {code})"
    if shape == "list":
        element = name("t", "s", "h")
        return f"[{one(element)} for {element} in {code}]"
    if shape == "dict":
        key, element = name("k", "key"), name("v", "value")
        return f"{{{key}: {one(element)} for {key}, {element} in {code}.items()}}"
    if shape == "number":
        return f"({code}.detach() if hasattr({code}, 'detach') else {code})"
    if shape == "state":
        # Made by code nobody read: a tensor (a GRU's h) or a tuple or list of them (an LSTM's (h, c)).
        element = name("h", "t", "s")
        each = f"type({code})({element}.detach() for {element} in {code})"
        return f"({code}.detach() if hasattr({code}, 'detach') else {each})"
    if shape == "distribution":
        return None
    return f"{code}.detach()"


def branch_test(text: str, calls: bool, row: int) -> str:
    """A branch's test as `guarded_apart` compares them: its text, and for a test that calls (evaluated
    anew each time, `if should_log():`) also its line, so no other branch has the same one."""
    return f"{text} @{row}" if calls else text


def guarded_apart(first: list[str], second: list[str]) -> bool:
    """Whether two calls of one function run under different branches, given the branches around each
    (each test's text, `not (...)` for an `else` arm): then one can run on a path without the other."""
    return sorted(first) != sorted(second)
