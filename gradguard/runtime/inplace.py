"""Explaining "one of the variables needed for gradient computation has been modified by an inplace
operation": which saved tensor, its versions, the variable holding it, the in-place op and the fix.

The node whose saved value is stale is found by unpacking saved tensors below the failing roots until
one raises the version error; the variable is matched by identity or storage; the op is read from the
tensor's current grad_fn and, where the source shows it, from the line that modified it.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from gradguard.causes import rule_for
from gradguard.runtime import source as src
from gradguard.runtime.carrier import Candidate, Scanner
from gradguard.runtime.context import Context
from gradguard.runtime.diagnosis import (
    Carrier,
    Cause,
    Diagnosis,
    ErrorKind,
    choose_fix,
    explanation_for,
)
from gradguard.runtime.graph import (
    SavedProbe,
    find_modified_save,
    grad_fn_of,
    node_name,
)

_INPLACE = re.compile(
    r"\[(?P<type>[^\s\]]+) \[(?P<shape>[^\]]*)\]\], which is (?P<what>.*?), is at version (?P<actual>\d+); "
    r"expected version (?P<expected>\d+)"
)

_INPLACE_OPS = {
    "CopySlices": "an indexed assignment (`x[...] = ...`)",
    "AddBackward0": "`add_` / `+=`",
    "SubBackward0": "`sub_` / `-=`",
    "MulBackward0": "`mul_` / `*=`",
    "DivBackward0": "`div_` / `/=`",
}


def explain_inplace(context: Context, rank: int | None, world: int | None) -> Diagnosis:
    """The diagnosis of the in-place error (raises on internal failure; the monitor guards it)."""
    failure = context.failure
    torch = context.torch
    parsed = _INPLACE.search(failure.message)
    probe = SavedProbe()
    root_nodes = [grad_fn_of(t) for t in failure.roots]
    modified = find_modified_save(root_nodes, failure.budget, probe)
    scanner = Scanner(
        is_tensor=lambda v: isinstance(v, torch.Tensor),
        wanted=lambda t: True,
        module_type=torch.nn.Module,
    )
    scanner.scan_frames(context.frames)
    scanner.scan_objects(parameters=True)
    match = _match_saved(scanner.candidates, modified.tensors if modified else ())
    carrier = None
    details: list[tuple[str, str]] = []
    if parsed:
        details.append(("value", f"{parsed['type']} of shape [{parsed['shape']}], {parsed['what']}"))
        details.append(("version", f"saved at version {parsed['expected']}, now at version {parsed['actual']}"))
    if modified is not None:
        details.append(("needed by", f"{node_name(modified.node)} (saved `{modified.slot}`)"))
    facts: dict[str, Any] = {"failing": context.call_site(failure.record)}
    if match is not None:
        is_parameter = isinstance(match.tensor, torch.nn.Parameter)
        carrier = context.carrier(match) if match.frame is not None else None
        op = _inplace_op(match, torch)
        if op:
            details.append(("in-place op", op))
        facts.update(_inplace_source(context, match, carrier))
        facts["parameter"] = is_parameter
        facts["group"] = match.group
    facts["carrier"] = carrier
    cause = Cause.INPLACE
    if match is not None and facts.get("parameter"):
        stepped = stepping_optimizers(context, match.tensor)
        if stepped:
            # Changed by an optimizer step before this backward: the cause lint's GG011 names.
            cause = Cause.STEPPED
            facts["between_steps"] = True
            facts["shared_parameters"] = stepped[1]
    if "inplace_line" in facts:
        details.append(("modified at", f"{facts['inplace_file']}:{facts['inplace_line']}: {facts['inplace_text']}"))
    diagnosis = Diagnosis(
        error=ErrorKind.INPLACE_MODIFIED,
        message=failure.message,
        failing_call=facts["failing"],
        freed_by=None,
        node=node_name(modified.node) if modified is not None else None,
        carrier=carrier,
        fix=choose_fix(cause, facts),
        rule=rule_for(cause),
        explanation="",
        cause=cause,
        rank=rank,
        world_size=world,
        details=tuple(details),
    )
    return replace(diagnosis, explanation=explanation_for(diagnosis))


def stepping_optimizers(context: Context, parameter: Any) -> tuple[bool, bool] | None:
    """Whether an optimizer whose update is called earlier in the failing function updates
    `parameter` (each named by its `step` call, looked up in the failing frame): (True, whether another
    optimizer stepped in the function updates some of its parameters too), or None."""
    from gradguard.runtime.causes import stepped_in, updated_by

    frame = context.failure.frame
    failing = context.call_site(context.failure.record)
    source = context.source(failing.filename) if failing is not None else None
    if frame is None or source is None or failing is None or frame.f_code.co_filename != source.filename:
        return None
    scope = source.function_at(failing.line)
    before = stepped_in(frame, source, scope, 0, failing.line)
    every = stepped_in(frame, source, scope, 0, 1 << 30)
    if not before or every is None:
        return None
    owning = [o for o in before if id(parameter) in updated_by(o)]
    if not owning:
        return None
    others = [o for o in every if not any(o is p for p in owning)]
    return True, any(updated_by(p) & updated_by(o) for p in owning for o in others)


def _match_saved(candidates: list[Candidate], tensors: tuple[Any, ...]) -> Candidate | None:
    """The candidate holding the saved tensor: the same object, else the same memory; innermost first."""
    best: tuple[int, int, Candidate] | None = None
    for candidate in candidates:
        for saved in tensors:
            score = _same_memory(candidate.tensor, saved)
            if score and (best is None or (score, -candidate.depth) > (best[0], best[1])):
                best = (score, -candidate.depth, candidate)
    return best[2] if best else None


def _same_memory(a: Any, b: Any) -> int:
    if a is b:
        return 3
    try:
        if a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr():
            return 0
        if a.storage_offset() == b.storage_offset() and tuple(a.shape) == tuple(b.shape):
            return 2
        return 1
    except Exception:  # noqa: BLE001 - sparse or meta tensors have no storage to compare
        return 0


def _inplace_op(candidate: Candidate, torch: Any) -> str | None:
    tensor = candidate.tensor
    if isinstance(tensor, torch.nn.Parameter) or tensor.grad_fn is None:
        return "an in-place update of a leaf tensor (optimizer.step(), or an update under torch.no_grad())"
    name = node_name(tensor.grad_fn)
    if name in _INPLACE_OPS:
        return _INPLACE_OPS[name]
    base = re.sub(r"Backward\d*$", "", name)
    return f"`{base.lower()}_`" if base else None


def _inplace_source(context: Context, candidate: Candidate, carrier: Carrier | None) -> dict[str, Any]:
    frame = context.home(candidate)
    if frame is None or candidate.owner is not None:
        return {}
    source, scope = context.scope(frame)
    if source is None:
        return {}
    first = carrier.line if carrier is not None and carrier.line is not None else 0
    edits = src.inplace_edits(source, scope, candidate.group, first, frame.f_lineno or 0)
    if not edits:
        return {}
    edit = edits[-1]
    return {
        "inplace_file": source.filename,
        "inplace_line": edit.line,
        "inplace_text": edit.text,
        "out_of_place": edit.out_of_place,
    }
