"""The diagnosis: plain, frozen data (strings and numbers only), and its `--report` JSON.

A diagnosis never holds a tensor, a graph node, a frame or the exception, so keeping one (the runner
keeps the last few) cannot extend any lifetime.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class ErrorKind(StrEnum):
    """Which autograd error was explained."""

    DOUBLE_BACKWARD = "double-backward"
    INPLACE_MODIFIED = "inplace-modified"


class FixKind(StrEnum):
    """The shape of the suggested fix (the `fix.kind` of the report)."""

    DETACH = "detach"
    RETAIN_GRAPH = "retain_graph"
    SUM_LOSSES = "sum_losses"
    ITEM = "item"
    RECOMPUTE_IN_LOOP = "recompute_in_loop"
    CREATE_GRAPH = "create_graph"
    OTHER = "other"


class Cause(StrEnum):
    """Why the graph was reused, as decided from the graph, the records and the source."""

    LOOP_CARRIED = "loop-carried state"
    ACCUMULATED = "loss accumulated as a tensor"
    GAN_FAKE = "generator output reused"
    SHARED_FORWARD = "separate backward calls through a shared forward"
    OUTSIDE_LOOP = "graph built once, used every iteration"
    GRAD_FREED = "torch.autograd.grad freed the graph"
    REPEATED = "the same graph backward-ed again"
    FRAMEWORK = "the framework calls backward too"
    COLLECTED = "graph tensors collected across iterations"
    UNKNOWN = "stale graph"
    INPLACE = "tensor modified in place"


DOUBLE_BACKWARD_PREFIX = "Trying to backward through the graph a second time"
INPLACE_MARKER = "modified by an inplace operation"


def error_kind(message: str) -> ErrorKind | None:
    """The kind of autograd error a RuntimeError message announces, or None for any other error."""
    if message.startswith(DOUBLE_BACKWARD_PREFIX):
        return ErrorKind.DOUBLE_BACKWARD
    if message.startswith("one of the variables needed for gradient computation") and INPLACE_MARKER in message:
        return ErrorKind.INPLACE_MODIFIED
    return None


@dataclass(frozen=True)
class CallSite:
    """A backward/grad call: where it is, which call of the run it was, and how it was made."""

    filename: str
    line: int
    function: str
    call_index: int | None
    source: str = ""
    retain_graph: bool = False
    api: str = "backward"

    def to_json(self) -> dict[str, Any]:
        """The report's `{filename, line, function, call_index}` object."""
        return {"filename": self.filename, "line": self.line, "function": self.function, "call_index": self.call_index}


@dataclass(frozen=True)
class Carrier:
    """The variable or attribute that carried the stale graph, and where it was last assigned."""

    expression: str
    filename: str | None
    line: int | None
    scope: str
    source: str = ""
    aliases: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The report's `{expression, filename, line, scope}` object."""
        return {"expression": self.expression, "filename": self.filename, "line": self.line, "scope": self.scope}


@dataclass(frozen=True)
class Fix:
    """The suggested change as code, and why retain_graph=True is or is not the answer here."""

    kind: FixKind
    suggestion: str
    where: str = ""
    retain_graph_note: str = ""

    def to_json(self) -> dict[str, Any]:
        """The report's `{kind, suggestion}` object."""
        return {"kind": str(self.kind), "suggestion": self.suggestion}


@dataclass(frozen=True)
class Diagnosis:
    """Everything gradguard says about one autograd error.

    `to_json()` gives exactly the `--report` schema; the other fields feed the rendered note.
    """

    error: ErrorKind
    message: str
    failing_call: CallSite | None
    freed_by: CallSite | None
    node: str | None
    carrier: Carrier | None
    fix: Fix
    rule: str | None
    explanation: str
    cause: Cause = Cause.UNKNOWN
    freed_by_exact: bool = False
    rank: int | None = None
    world_size: int | None = None
    created_at: str | None = None
    called_by: str | None = None
    hint: str | None = None
    details: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The `--report` object, keys exactly as documented."""
        return {
            "error": str(self.error),
            "message": self.message,
            "failing_call": self.failing_call.to_json() if self.failing_call else None,
            "freed_by": self.freed_by.to_json() if self.freed_by else None,
            "node": self.node,
            "carrier": self.carrier.to_json() if self.carrier else None,
            "fix": self.fix.to_json(),
            "rule": self.rule,
            "explanation": self.explanation,
        }


REPORT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "gradguard runtime report",
    "type": ["object", "null"],
    "additionalProperties": False,
    "required": ["error", "message", "failing_call", "freed_by", "node", "carrier", "fix", "rule", "explanation"],
    "properties": {
        "error": {"enum": [str(k) for k in ErrorKind]},
        "message": {"type": "string"},
        "failing_call": {"$ref": "#/$defs/call"},
        "freed_by": {"oneOf": [{"$ref": "#/$defs/call"}, {"type": "null"}]},
        "node": {"type": ["string", "null"]},
        "carrier": {
            "oneOf": [
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["expression", "filename", "line", "scope"],
                    "properties": {
                        "expression": {"type": "string"},
                        "filename": {"type": ["string", "null"]},
                        "line": {"type": ["integer", "null"]},
                        "scope": {"type": "string"},
                    },
                },
                {"type": "null"},
            ]
        },
        "fix": {
            "type": "object",
            "additionalProperties": False,
            "required": ["kind", "suggestion"],
            "properties": {"kind": {"enum": [str(k) for k in FixKind]}, "suggestion": {"type": "string"}},
        },
        "rule": {"type": ["string", "null"], "pattern": "^GG[0-9]{3}$"},
        "explanation": {"type": "string"},
    },
    "$defs": {
        "call": {
            "type": "object",
            "additionalProperties": False,
            "required": ["filename", "line", "function", "call_index"],
            "properties": {
                "filename": {"type": "string"},
                "line": {"type": "integer"},
                "function": {"type": "string"},
                "call_index": {"type": ["integer", "null"]},
            },
        }
    },
}
"""The JSON Schema of a `--report` file (an object, or null when nothing was diagnosed)."""


# --------------------------------------------------------------------------------------------------
# Rule, fix and explanation, chosen by cause

_RULES: dict[Cause, str | None] = {
    Cause.REPEATED: "GG001",
    Cause.SHARED_FORWARD: "GG002",
    Cause.LOOP_CARRIED: "GG003",
    Cause.ACCUMULATED: "GG004",
    Cause.GAN_FAKE: "GG005",
    Cause.OUTSIDE_LOOP: "GG006",
    Cause.GRAD_FREED: "GG007",
    Cause.FRAMEWORK: "GG008",
    Cause.COLLECTED: "GG003",
    Cause.UNKNOWN: None,
    Cause.INPLACE: None,
}


def rule_for(cause: Cause) -> str | None:
    """The static rule that finds this cause before the program runs."""
    return _RULES[cause]


def _detach_code(expression: str, container: str | None) -> str:
    if container == "tuple":
        return f"{expression} = tuple(t.detach() for t in {expression})"
    if container == "list":
        return f"{expression} = [t.detach() for t in {expression}]"
    if container == "dict":
        return f"{expression} = {{k: v.detach() for k, v in {expression}.items()}}"
    return f"{expression} = {expression}.detach()"


def _replace_word(text: str, word: str, replacement: str) -> str:
    import re

    return re.sub(rf"(?<![\w.]){re.escape(word)}(?!\w)", replacement, text, count=1)


_WRONG = "retain_graph=True would be wrong here: "


def choose_fix(cause: Cause, facts: dict[str, Any]) -> Fix:
    """The fix for `cause`, as code naming the user's variables (from `facts`, gathered from source)."""
    carrier: Carrier | None = facts.get("carrier")
    expression = carrier.expression if carrier else facts.get("group") or "x"
    failing: CallSite | None = facts.get("failing")
    freed: CallSite | None = facts.get("freed")
    if cause is Cause.LOOP_CARRIED:
        code = _detach_code(expression, facts.get("container"))
        if carrier is not None and carrier.scope not in ("<module>",) and expression.startswith("self."):
            where = f"at the top of {carrier.scope}.forward (or wherever the state is read), before `{expression}` is used"
        else:
            where = f"at the start of each iteration, before `{expression}` is used again"
        return Fix(
            FixKind.DETACH,
            code,
            where,
            _WRONG + "it would keep the graph of every earlier iteration alive, so each backward runs through "
            "the whole history (slower every step) and memory grows until it runs out. Detaching keeps the "
            "value and cuts the graph at the iteration boundary (truncated backpropagation through time).",
        )
    if cause is Cause.COLLECTED:
        return Fix(
            FixKind.OTHER,
            f"{expression}.clear()",
            f"empty `{expression}` after each backward (or at the start of each iteration), so it only holds "
            "tensors of the current graph; store `.detach()`ed tensors or `.item()` if they are only logged",
            _WRONG + f"it would keep the graph behind every tensor ever added to `{expression}` alive; memory "
            "grows every step and each backward goes through all earlier iterations again.",
        )
    if cause is Cause.FRAMEWORK:
        receiver = facts.get("freed_call_receiver") or expression
        return Fix(
            FixKind.OTHER,
            f"return {receiver}  # and delete `{facts.get('freed_call') or receiver + '.backward()'}`",
            "the framework already runs backward on the loss your step returns: remove your own backward call "
            "(or switch to manual optimization, e.g. Lightning's `self.automatic_optimization = False` with "
            "`self.manual_backward(loss)`)",
            _WRONG + "it would run backward twice per step, doubling every gradient.",
        )
    if cause is Cause.ACCUMULATED:
        value = facts.get("accumulated_value") or "loss"
        if facts.get("periodic"):
            return Fix(
                FixKind.OTHER,
                f"{expression} = 0.0",
                f"reset `{expression}` right after the backward that consumes it (each accumulation window "
                "must start from zero)",
                _WRONG + f"each update would backpropagate through every earlier window again through "
                f"`{expression}`: gradients counted many times, memory growing without bound.",
            )
        code = f"{value}.backward()\n{expression} += {value}.item()"
        return Fix(
            FixKind.ITEM,
            code,
            f"backward each step's `{value}` and accumulate a Python number in `{expression}` for logging",
            _WRONG + f"it keeps every step's graph alive inside `{expression}` and backpropagates through all "
            "earlier losses again at each step: gradients are counted many times and memory grows every step.",
        )
    if cause is Cause.GAN_FAKE:
        call = facts.get("first_use_call")
        statement = facts.get("first_use_statement")
        if call and statement:
            new_call = _replace_word(call, expression, f"{expression}.detach()")
            code = statement.replace(call, new_call, 1)
        else:
            code = f"D({expression}.detach())"
        line = facts.get("first_use_line")
        where = "in the discriminator step" + (f" (line {line})" if line else "")
        return Fix(
            FixKind.DETACH,
            code,
            where,
            _WRONG + "it would let the discriminator's loss send gradients into the generator (they pile up "
            "in its .grad until the generator step) and keep the generator's graph alive longer. The "
            f"discriminator step must not train the generator: give it `{expression}.detach()`.",
        )
    if cause is Cause.SHARED_FORWARD:
        first = facts.get("freed_call_receiver")
        second = facts.get("failing_call_receiver")
        if first and second and first != second:
            code = f"({first} + {second}).backward()"
        else:
            code = "(loss_a + loss_b).backward()"
        where = "one backward on the sum, instead of the two calls"
        if freed and failing:
            where += f" at lines {freed.line} and {failing.line}"
        return Fix(
            FixKind.SUM_LOSSES,
            code,
            where,
            "retain_graph=True on the first backward would also work if the losses really need separate "
            "backward passes, at the cost of keeping the shared activations alive until the last one; no "
            "optimizer.step() may run in between (it changes the weights in place), and under "
            "DistributedDataParallel the sum is the safe choice.",
        )
    if cause is Cause.OUTSIDE_LOOP:
        statement = facts.get("assignment_statement") or (carrier.source if carrier else "")
        code = statement or f"{expression} = ...  # recompute inside the loop"
        if expression.startswith("self."):
            where = f"compute it in forward() (each call) instead of once; or `{expression}.detach()` if no gradient should flow into it"
        else:
            where = f"move it inside the loop, before line {failing.line if failing else '?'}; or detach it if no gradient should flow into it"
        return Fix(
            FixKind.RECOMPUTE_IN_LOOP,
            code,
            where,
            _WRONG + "it keeps the precomputed graph alive and backpropagates through the same stale copy "
            "every step, while the parameters it was computed from change after each optimizer step.",
        )
    if cause is Cause.GRAD_FREED:
        if facts.get("grad_feeds_loss"):
            return Fix(
                FixKind.CREATE_GRAPH,
                facts.get("freed_call_create") or "torch.autograd.grad(..., create_graph=True)",
                "on the torch.autograd.grad call whose result is part of the loss",
                "retain_graph=True alone would stop the error but the term built from the gradient would be a "
                "constant with no gradient of its own; create_graph=True records the gradient computation "
                "(and keeps the graph for the later backward).",
            )
        return Fix(
            FixKind.RETAIN_GRAPH,
            facts.get("freed_call_retain") or "torch.autograd.grad(..., retain_graph=True)",
            "on the torch.autograd.grad call, since a second pass through the same graph follows it",
            "retain_graph=True is right here: the second pass is intended, and the graph is freed after "
            "the later backward.",
        )
    if cause is Cause.REPEATED:
        if facts.get("outside_loop") or facts.get("between_steps"):
            statement = facts.get("assignment_statement") or ""
            return Fix(
                FixKind.RECOMPUTE_IN_LOOP,
                statement or f"{expression} = ...  # recompute before each backward",
                "recompute the loss (run the forward again) before each backward, inside the loop or closure",
                _WRONG + "the second backward would reuse activations from before the parameters changed, "
                "so its gradients would be stale.",
            )
        receiver = facts.get("failing_call_receiver") or expression
        return Fix(
            FixKind.RETAIN_GRAPH if facts.get("intended_second_pass") else FixKind.OTHER,
            facts.get("freed_call_retain") or f"{receiver}.backward(retain_graph=True)",
            "only if the second backward through the same graph is intended; otherwise remove one of the "
            "two calls",
            "retain_graph=True is right only when you mean to backpropagate twice through the same "
            "forward (gradients add up in .grad); a repeated call by accident should be removed instead.",
        )
    if cause is Cause.INPLACE:
        if facts.get("parameter"):
            return Fix(
                FixKind.OTHER,
                "optimizer.step()  # only after the last backward through this forward",
                "run every backward that uses this forward before optimizer.step(), or recompute the forward "
                "after the step",
                "retain_graph=True does not help: the saved value itself was overwritten.",
            )
        out_of_place = facts.get("out_of_place")
        group = facts.get("group") or expression
        return Fix(
            FixKind.OTHER,
            out_of_place or f"{group} = {group}.clone()  # before modifying it in place",
            "use the out-of-place form (or modify a .clone()) so the value autograd saved stays intact",
            "retain_graph=True does not help: the saved value itself was overwritten.",
        )
    return Fix(
        FixKind.OTHER,
        f"{expression} = {expression}.detach()" if carrier else "x = x.detach()  # the tensor reused across backward calls",
        "detach the tensor that is reused across backward calls, or recompute it before the second call",
        "retain_graph=True silences this error but keeps the old graph alive; use it only when a second "
        "backward through the same graph is intended.",
    )


def _at(site: CallSite | None) -> str:
    return f"{site.filename}:{site.line}" if site else "an unknown place"


_CAUSE_TEXT: dict[Cause, str] = {
    Cause.LOOP_CARRIED: "`{carrier}` is carried from one iteration to the next without .detach(), so each new "
    "graph is chained to the previous iteration's graph, which that iteration's backward already freed.",
    Cause.ACCUMULATED: "`{carrier}` accumulates the loss tensors across steps, so backpropagating through it "
    "reaches every earlier step's graph, which earlier backward calls already freed.",
    Cause.GAN_FAKE: "`{carrier}` (the generator's output) went into the discriminator's loss without .detach(); "
    "that backward freed the generator's graph, and the generator's loss needs it again.",
    Cause.SHARED_FORWARD: "`{carrier}` comes from one forward pass shared by two losses, each with its own "
    "backward: the first backward freed the shared part of the graph.",
    Cause.OUTSIDE_LOOP: "`{carrier}` was computed once, outside the loop, from tensors that require grad; the "
    "first backward freed its graph, and every later iteration uses it again.",
    Cause.GRAD_FREED: "a torch.autograd.grad call ran without retain_graph or create_graph and freed the graph that "
    "the later call goes through again.",
    Cause.REPEATED: "the same graph (`{carrier}`) is backpropagated a second time without running the forward "
    "again.",
    Cause.UNKNOWN: "a tensor computed before an earlier backward is reused by this one.",
    Cause.FRAMEWORK: "the training loop of the framework calls backward on the loss the step returns, after the "
    "step already called backward on `{carrier}` itself.",
    Cause.COLLECTED: "tensors with their graphs are collected in `{carrier}` across iterations and never "
    "cleared, so a later backward reaches graphs that earlier iterations' backward calls freed.",
    Cause.INPLACE: "",
}


def reason_for(diagnosis: Diagnosis) -> str:
    """One or two sentences on why it happened (the note's "why" row)."""
    if diagnosis.error is ErrorKind.INPLACE_MODIFIED:
        return (
            f"Backward needed the value saved for {diagnosis.node or 'an op'}, but it was overwritten in place "
            "after the forward pass saved it."
        )
    carrier = diagnosis.carrier.expression if diagnosis.carrier else "a reused tensor"
    text = _CAUSE_TEXT[diagnosis.cause].format(carrier=carrier)
    return text[0].upper() + text[1:]


def explanation_for(diagnosis: Diagnosis) -> str:
    """A few sentences saying what happened, in the user's terms."""
    d = diagnosis
    carrier = d.carrier.expression if d.carrier else "a reused tensor"
    if d.error is ErrorKind.INPLACE_MODIFIED:
        facts = dict(d.details)
        parts = [
            f"Backward needed a value that was overwritten in place after it was saved for {d.node or 'an op'}.",
        ]
        if d.carrier:
            parts.append(f"The tensor is `{d.carrier.expression}`" + (f" ({facts['tensor']})." if "tensor" in facts else "."))
        if "version" in facts:
            parts.append(f"It was {facts['version']}.")
        if "in-place op" in facts:
            parts.append(f"It was changed by {facts['in-place op']}" + (f", at {facts['modified at']}." if "modified at" in facts else "."))
        return " ".join(parts)
    parts = []
    where = f"On rank {d.rank} of {d.world_size}: " if d.rank is not None else ""
    call = d.failing_call
    freed = d.freed_by
    if freed is not None:
        how = "" if d.freed_by_exact else " (inferred from creation order)"
        api = call.api if call else "backward"
        parts.append(
            f"{where}{api[0].upper() + api[1:]} call #{call.call_index if call else '?'} at {_at(call)} went "
            f"through a part of the graph that {freed.api} call #{freed.call_index} at {_at(freed)} had already "
            f"freed{how}; that call ran without retain_graph=True, so autograd released the saved tensors"
            + (f" of {d.node}." if d.node else ".")
        )
    else:
        parts.append(
            f"{where}This backward went through a graph whose saved tensors were already freed"
            + (f" ({d.node})" if d.node else "")
            + "; the call that freed it was not recorded (it ran before the monitor was installed, on another "
            "thread, or too long ago)."
        )
    cause_text = _CAUSE_TEXT[d.cause].format(carrier=carrier)
    if cause_text:
        parts.append(cause_text[0].upper() + cause_text[1:])
    if d.carrier and d.carrier.line:
        parts.append(f"`{d.carrier.expression}` was last assigned at {d.carrier.filename}:{d.carrier.line}.")
    if d.created_at:
        parts.append(f"The freed node was created at {d.created_at}.")
    return " ".join(parts)
