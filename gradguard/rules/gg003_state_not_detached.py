"""GG003: state carried from one iteration to the next without `.detach()`."""

from __future__ import annotations

from gradguard import codemods
from gradguard.analysis.facts import Cause, Conflict, FileFacts
from gradguard.model import Edit
from gradguard.rules import ConflictRule, FixPlan


class StateNotDetached(ConflictRule):
    """A hidden state, a buffer or a list kept across iterations still holds last iteration's graph."""

    code = "GG003"
    causes = frozenset({Cause.LOOP_CARRIED})

    def fix(self, facts: FileFacts, conflict: Conflict) -> FixPlan:
        edits, title = _fix(facts, conflict)
        return FixPlan(tuple(edits), title)


def _fix(facts: FileFacts, conflict: Conflict) -> tuple[list[Edit], str | None]:
    carrier = conflict.carrier
    if carrier is None:
        return [], None
    name = carrier.holder.text
    if carrier.is_container:
        if conflict.failing.statement is None:
            return [], None
        return [codemods.insert_after(facts, conflict.failing.statement, [f"del {name}[:]"])], \
            "Empty `{carrier}` after the backward that used it"
    if conflict.entry_statement is None:
        return [], None
    if carrier.is_tuple:
        line = f"{name} = tuple(h.detach() for h in {name})"
    else:
        line = f"{name} = {name}.detach()"
    lines = [f"if {name} is not None:", f"    {line}"] if carrier.maybe_none else [line]
    return [codemods.insert_before(facts, conflict.entry_statement, lines)], None
