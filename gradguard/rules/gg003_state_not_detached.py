"""GG003: state carried from one iteration to the next without `.detach()`."""

from __future__ import annotations

from collections.abc import Iterator

from gradguard import codemods
from gradguard.analysis.facts import Cause, Conflict, FileFacts
from gradguard.model import Diagnostic, Edit
from gradguard.rules import Rule, carrier_name, conflict_related, freed_row


class StateNotDetached(Rule):
    """A hidden state, a buffer or a list kept across iterations still holds last iteration's graph."""

    code = "GG003"

    def check(self, facts: FileFacts) -> Iterator[Diagnostic]:
        for conflict in facts.conflicts:
            if conflict.cause is not Cause.LOOP_CARRIED:
                continue
            edits, title = _fix(facts, conflict)
            yield self.report(facts, conflict.failing.node, related=conflict_related(facts, conflict),
                              edits=edits, fix_title=title, carrier=carrier_name(conflict),
                              line=freed_row(facts, conflict))


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
