"""GG004: a loss summed into an accumulator across iterations, then backward-ed through it."""

from __future__ import annotations

import libcst as cst

from gradguard import causes as model
from gradguard import codemods
from gradguard.analysis.api.torch_tensor import CPU, DETACH, NUMBER
from gradguard.analysis.facts import Cause, Conflict, FileFacts
from gradguard.model import Edit
from gradguard.rules import ConflictRule, FixPlan, carrier_shape


class LossAccumulatedAsTensor(ConflictRule):
    """`total += loss` keeps every step's graph; a backward through `total` reaches freed ones."""

    code = "GG004"
    causes = frozenset({Cause.ACCUMULATED})

    def fix(self, facts: FileFacts, conflict: Conflict, option: model.Option) -> FixPlan:
        edits, title = _fix(facts, conflict, option)
        return FixPlan(tuple(edits), title)


def addend(statement: cst.CSTNode, name: str) -> cst.BaseExpression | None:
    """What `name += x` or `name = name + x` adds to the accumulator."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.AugAssign) and isinstance(small.operator, cst.AddAssign):
        return small.value
    if isinstance(small, cst.Assign) and isinstance(small.value, cst.BinaryOperation) \
            and isinstance(small.value.operator, cst.Add):
        return small.value.right
    return None


def _fix(facts: FileFacts, conflict: Conflict, option: model.Option) -> tuple[list[Edit], str | None]:
    carrier, failing = conflict.carrier, conflict.failing
    if carrier is None or failing.statement is None or not isinstance(failing.node, cst.Call):
        return [], None
    name = carrier.holder.text
    if option.kind is model.FixKind.OTHER:
        after = codemods.last_reading_after(facts, failing.statement, name)
        # Reset to a number: code elsewhere that reads its value as a tensor's (`total.item()` when
        # logging) reads it as a number, which both a tensor and the reset value give.
        home = facts.home(failing.statement)
        body = list(getattr(home.parent(failing.statement), "body", ()))
        before = body[body.index(failing.statement):body.index(after) + 1] if after in body else [after]
        spans = [home.span(statement) for statement in before]
        readers = [codemods.replace_node(facts, use, f"float({facts.code(receiver)})") for use, receiver
                   in codemods.tensor_method_calls(facts, name, failing.statement, (NUMBER,))
                   if not any(span.start <= home.span(use).start and home.span(use).end <= span.end
                              for span in spans)]
        return [codemods.insert_after(facts, after, [f"{name} = 0"]), *readers], \
            "Reset `{carrier}` after each backward"
    updates = [s for s in carrier.assignments if addend(s, name) is not None]
    if len(updates) != 1 or not isinstance(failing.node.func, cst.Attribute):
        return [], None
    added = addend(updates[0], name)
    assert added is not None
    if isinstance(added, cst.Call) and isinstance(added.func, cst.Attribute) and added.func.attr.value == NUMBER:
        # Already a number: what still carries graphs is not this sum; offer nothing rather than
        # the same edit again.
        return [], None
    root = added if isinstance(added, (cst.Name, cst.Attribute)) else cst.parse_expression(
        f"({facts.code(added)})")
    call = failing.node
    if facts.code(call.func.value) == name:  # type: ignore[union-attr]
        new_call = call.with_changes(func=call.func.with_changes(value=root))  # type: ignore[union-attr]
    elif call.args and facts.code(call.args[0].value) == name:
        # `torch.autograd.backward(total)`: the accumulator is the first argument.
        new_call = call.with_changes(args=[call.args[0].with_changes(value=root), *call.args[1:]])
    else:
        return [], None
    item = cst.parse_expression(f"{facts.code(added) if isinstance(added, (cst.Name, cst.Attribute, cst.Call)) else '(' + facts.code(added) + ')'}.item()")
    edits = [codemods.replace_node(facts, call, new_call), codemods.replace_node(facts, added, item)]
    if carrier_shape(facts, conflict) == "number":
        # Started as a Python number and now only ever adds numbers: it stays a float, which has no
        # `.item()` or `.detach()` for the code that reads it afterwards.
        edits += [codemods.replace_node(facts, use, facts.code(receiver)) for use, receiver
                  in codemods.tensor_method_calls(facts, name, failing.statement, (NUMBER, DETACH, CPU))]
    return edits, None
