"""The diagnosis: plain, frozen data (strings and numbers only), and its `--report` JSON.

A diagnosis never holds a tensor, a graph node, a frame or the exception, so keeping one (the runner
keeps the last few) cannot extend any lifetime.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from gradguard import causes
from gradguard.analysis.api.torch_functions import GRAD_FUNCTION, NO_GRAD_CONTEXT
from gradguard.analysis.api.torch_tensor import BACKWARD
from gradguard.causes import Cause, FixKind  # noqa: F401 - the runtime's names for the shared model


class ErrorKind(StrEnum):
    """Which autograd error was explained."""

    DOUBLE_BACKWARD = "double-backward"
    INPLACE_MODIFIED = "inplace-modified"


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
    api: str = BACKWARD

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
# Rule, fix and explanation: the cause model of `gradguard.causes` decides, this words it as code


def rule_for(cause: Cause) -> str | None:
    """The static rule that finds this cause before the program runs."""
    return causes.rule_for(cause)


def evidence_from(facts: dict[str, Any]) -> causes.Evidence:
    """The runtime's facts as the evidence record the cause model decides from (lint fills the same)."""
    container = facts.get("container")
    return causes.Evidence(
        shape=container if container in ("tuple", "list", "dict", "nested") else facts.get("shape") or "tensor",
        same_call=bool(facts.get("same_call")),
        stepped_between=bool(facts.get("between_steps")),
        grads_read_between=bool(facts.get("grads_read_between")),
        periodic=bool(facts.get("periodic")),
        outside_loop=bool(facts.get("outside_loop")),
        grad_feeds_loss=bool(facts.get("grad_feeds_loss")),
        intended_second_pass=bool(facts.get("intended_second_pass")),
        guarded_apart=bool(facts.get("guarded_apart")),
        settled_input=bool(facts.get("settled_input")),
        frozen_source=bool(facts.get("frozen_source")),
        reference_only=bool(facts.get("reference_only")),
        written_in_place=bool(facts.get("written_in_place")),
        shared_parameters=bool(facts.get("shared_parameters")),
    )


def _detach_code(expression: str, container: str | None, helper: str | None = None, items: str = "tensor") -> str:
    if helper is not None and container != "dict":
        return f"{expression} = {helper}({expression})"
    if container == "nested":
        return ("def repackage_hidden(h):\n"
                "    return h.detach() if isinstance(h, torch.Tensor) else type(h)(repackage_hidden(v) for v in h)\n"
                f"{expression} = repackage_hidden({expression})")
    # The text lint's fix writes for the same shape.
    return f"{expression} = {causes.detach_code(expression, container or 'tensor', items)}"


def _replace_word(text: str, word: str, replacement: str) -> str:
    import re

    return re.sub(rf"(?<![\w.]){re.escape(word)}(?!\w)", replacement, text, count=1)


_Facts = dict[str, Any]


def _detach(cause: Cause, expression: str, facts: _Facts) -> tuple[str, str]:
    if cause is Cause.GAN_FAKE:
        call, statement = facts.get("first_use_call"), facts.get("first_use_statement")
        code = statement.replace(call, _replace_word(call, expression, f"{expression}.detach()"), 1) \
            if call and statement else f"D({expression}.detach())"
        line = facts.get("first_use_line")
        return code, "in the discriminator step" + (f" (line {line})" if line else "")
    carrier: Carrier | None = facts.get("carrier")
    failing: CallSite | None = facts.get("failing")
    if cause is Cause.SHARED_FORWARD:
        # Settled input (`causes.Evidence.settled_input`): the later loss reads it as a constant.
        line = f" at line {failing.line}" if failing is not None else ""
        where = f"after the optimizer step, before the loss backward-ed{line} reads `{expression}`"
    elif carrier is not None and carrier.scope != "<module>" and expression.startswith("self."):
        where = f"at the top of {carrier.scope}.forward (or wherever the state is read), before `{expression}` is used"
    else:
        where = f"at the start of each iteration, before `{expression}` is used again"
    return _detach_code(expression, facts.get("container"), facts.get("detach_helper"),
                        facts.get("item_shape") or "tensor"), where


def _retain(cause: Cause, expression: str, facts: _Facts) -> tuple[str, str]:
    if cause is Cause.GRAD_FREED:
        return facts.get("freed_call_retain") or f"{GRAD_FUNCTION}(..., retain_graph=True)", \
            f"on the {GRAD_FUNCTION} call, since a second pass through the same graph follows it"
    receiver = facts.get("freed_call_receiver") or facts.get("failing_call_receiver") or expression
    # Why, in the words of the cause model's option that chose it (gradients read in between, or calls
    # under different conditions).
    return facts.get("freed_call_retain") or f"{receiver}.backward(retain_graph=True)", \
        f"on the earlier backward: {causes.choose(cause, evidence_from(facts)).summary}"


def _sum(cause: Cause, expression: str, facts: _Facts) -> tuple[str, str]:
    first, second = facts.get("freed_call_receiver"), facts.get("failing_call_receiver")
    code = f"({first} + {second}).backward()" if first and second and first != second else "(loss_a + loss_b).backward()"
    freed, failing = facts.get("freed"), facts.get("failing")
    where = "one backward on the sum, instead of the two calls"
    if freed and failing:
        where += f" at lines {freed.line} and {failing.line}"
    return code, where


def _item(cause: Cause, expression: str, facts: _Facts) -> tuple[str, str]:
    value = facts.get("accumulated_value") or "loss"
    return f"{value}.backward()\n{expression} += {value}.item()", \
        f"backward each step's `{value}` and accumulate a Python number in `{expression}` for logging"


def _recompute(cause: Cause, expression: str, facts: _Facts) -> tuple[str, str]:
    carrier: Carrier | None = facts.get("carrier")
    if cause is Cause.STEPPED and not facts.get("assignment_statement"):
        # Known from the in-place error only: the parameter the step changed, not the statement that
        # built the loss; the failing call names the loss.
        site: CallSite | None = facts.get("failing")
        failing = (site.source.strip() if site is not None and site.source else "") or "loss.backward()"
        loss = failing.split(".backward(", 1)[0] if ".backward(" in failing else "loss"
        return f"{loss} = ...  # the forward that builds it, again, after the optimizer step\n{failing}", (
            "run the forward that builds the loss again after the step (the step changed the weights its graph "
            "saved), and drop retain_graph=True from the earlier backward")
    statement = facts.get("assignment_statement") or (carrier.source if carrier else "")
    if cause in (Cause.REPEATED, Cause.SHARED_FORWARD):
        return statement or f"{expression} = ...  # recompute before each backward", \
            "recompute the loss (run the forward again) before each backward, inside the loop or closure"
    code = statement or f"{expression} = ...  # recompute inside the loop"
    if expression.startswith("self."):
        return code, f"compute it in forward() (each call) instead of once; or `{expression}.detach()` if no gradient should flow into it"
    failing: CallSite | None = facts.get("failing")
    return code, f"move it inside the loop, before line {failing.line if failing else '?'}; or detach it if no gradient should flow into it"


def _move_step(cause: Cause, expression: str, facts: _Facts) -> tuple[str, str]:
    site: CallSite | None = facts.get("failing")
    failing = facts.get("failing_call") or (
        site.source.strip() if site is not None and site.source else "loss.backward()")
    return f"{failing}\noptimizer.step()  # each step after the last backward through this forward", (
        "zero every optimizer's gradients before the first backward, run the backward calls, then step "
        "the optimizers: the parameters they share get both losses' gradients from the same weights")


def _no_grad(cause: Cause, expression: str, facts: _Facts) -> tuple[str, str]:
    carrier: Carrier | None = facts.get("carrier")
    statement = (facts.get("assignment_statement") or (carrier.source if carrier else "")).strip()
    line = f" (line {carrier.line})" if carrier is not None and carrier.line else ""
    why = causes.choose(cause, evidence_from(facts)).summary
    if cause is Cause.LOOP_CARRIED:
        # State the program only writes into in place: its writes (in a method, often) go under no_grad.
        return f"with {NO_GRAD_CONTEXT}():\n    ...  # each in-place write into {expression}", \
            f"where the program writes into `{expression}`: {why}"
    if statement and _assigns_only(statement, expression):
        # The text lint's fix writes: the statement that makes it, under no_grad.
        return f"with {NO_GRAD_CONTEXT}():\n    {statement}", f"where `{expression}` is made{line}: {why}"
    return f"{expression} = {expression}.detach()", f"right after `{expression}` is made{line}: {why}"


def _assigns_only(statement: str, expression: str) -> bool:
    """Whether a one-line assignment binds `expression` and nothing else (`x = f(...)`)."""
    try:
        tree = ast.parse(statement)
    except SyntaxError:
        return False
    node = tree.body[0] if len(tree.body) == 1 else None
    return isinstance(node, ast.Assign) and len(node.targets) == 1 \
        and isinstance(node.targets[0], (ast.Name, ast.Attribute)) and ast.unparse(node.targets[0]) == expression


def _create(cause: Cause, expression: str, facts: _Facts) -> tuple[str, str]:
    return facts.get("freed_call_create") or f"{GRAD_FUNCTION}(..., create_graph=True)", \
        f"on the {GRAD_FUNCTION} call whose result is part of the loss"


def _other(cause: Cause, expression: str, facts: _Facts) -> tuple[str, str]:
    if cause is Cause.COLLECTED:
        return f"{expression}.clear()", (
            f"empty `{expression}` after each backward (or at the start of each iteration), so it only holds "
            "tensors of the current graph; store `.detach()`ed tensors or `.item()` if they are only logged")
    if cause is Cause.FRAMEWORK:
        receiver = facts.get("freed_call_receiver") or expression
        return f"return {receiver}  # and delete `{facts.get('freed_call') or receiver + '.backward()'}`", (
            "the framework already runs backward on the loss your step returns: remove your own backward call "
            "(or switch to manual optimization, e.g. Lightning's `self.automatic_optimization = False` with "
            "`self.manual_backward(loss)`)")
    if cause is Cause.ACCUMULATED:
        return f"{expression} = 0.0", (f"reset `{expression}` right after the backward that consumes it (each "
                                       "accumulation window must start from zero)")
    if cause is Cause.REPEATED:
        receiver = facts.get("failing_call_receiver") or expression
        return facts.get("freed_call_retain") or f"{receiver}.backward(retain_graph=True)", (
            "only if the second backward through the same graph is intended; otherwise remove one of the "
            "two calls")
    if cause is Cause.INPLACE:
        if facts.get("parameter"):
            return "optimizer.step()  # only after the last backward through this forward", (
                "run every backward that uses this forward before optimizer.step(), or recompute the forward "
                "after the step")
        group = facts.get("group") or expression
        return facts.get("out_of_place") or f"{group} = {group}.clone()  # before modifying it in place", \
            "use the out-of-place form (or modify a .clone()) so the value autograd saved stays intact"
    code = f"{expression} = {expression}.detach()" if facts.get("carrier") else \
        "x = x.detach()  # the tensor reused across backward calls"
    return code, "detach the tensor that is reused across backward calls, or recompute it before the second call"


_WORDING = {
    FixKind.DETACH: _detach, FixKind.RETAIN_GRAPH: _retain, FixKind.SUM_LOSSES: _sum, FixKind.ITEM: _item,
    FixKind.RECOMPUTE_IN_LOOP: _recompute, FixKind.NO_GRAD: _no_grad, FixKind.CREATE_GRAPH: _create,
    FixKind.MOVE_STEP: _move_step, FixKind.OTHER: _other,
}


def choose_fix(cause: Cause, facts: dict[str, Any]) -> Fix:
    """The fix for `cause`: its kind from the shared cause model, as code naming the user's variables."""
    carrier: Carrier | None = facts.get("carrier")
    expression = carrier.expression if carrier else facts.get("group") or "x"
    kind = causes.fix_kind(cause, evidence_from(facts))
    code, where = _WORDING[kind](cause, expression, facts)
    note = causes.retain_note(cause)
    if kind is FixKind.RETAIN_GRAPH and cause is Cause.GRAD_FREED:
        # Nothing of the gradient goes into the later loss (it is only looked at): retaining is the fix.
        note = ("retain_graph=True is right here: the gradient is only looked at, and the later backward "
                "frees the graph.")
    elif kind is FixKind.RETAIN_GRAPH:
        note = "retain_graph=True is right here: the second pass is intended, and the graph is freed after the later backward."
    return Fix(kind, code, where, note)


def _at(site: CallSite | None) -> str:
    return f"{site.filename}:{site.line}" if site else "an unknown place"


def reason_for(diagnosis: Diagnosis) -> str:
    """One or two sentences on why it happened (the note's "why" row)."""
    if diagnosis.error is ErrorKind.INPLACE_MODIFIED:
        return (
            f"Backward needed the value saved for {diagnosis.node or 'an op'}, but it was overwritten in place "
            "after the forward pass saved it."
        )
    carrier = diagnosis.carrier.expression if diagnosis.carrier else "a reused tensor"
    text = causes.explanation(diagnosis.cause, carrier)
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
        api = call.api if call else BACKWARD
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
    cause_text = causes.explanation(d.cause, carrier)
    if cause_text:
        parts.append(cause_text[0].upper() + cause_text[1:])
    if d.carrier and d.carrier.line:
        parts.append(f"`{d.carrier.expression}` was last assigned at {d.carrier.filename}:{d.carrier.line}.")
    if d.created_at:
        parts.append(f"The freed node was created at {d.created_at}.")
    return " ".join(parts)
