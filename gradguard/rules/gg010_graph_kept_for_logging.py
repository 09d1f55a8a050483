"""GG010: loss tensors kept across iterations (a list, a running sum) keep every step's graph alive."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from gradguard import causes as model
from gradguard import codemods
from gradguard.analysis.facts import FileFacts
from gradguard.model import Diagnostic
from gradguard.rules import Decision, Rule


class GraphKeptForLogging(Rule):
    """A tensor that requires grad is stored across iterations only to be logged."""

    code = "GG010"

    def decisions(self, facts: FileFacts) -> Iterator[Decision]:
        for diagnostic in self.check(facts):
            yield Decision(self.code, diagnostic.span, model.Cause.KEPT_FOR_LOGGING,
                           model.fix_kind(model.Cause.KEPT_FOR_LOGGING, model.Evidence()))

    def check(self, facts: FileFacts) -> Iterator[Diagnostic]:
        for kept in facts.kept_alive:
            value = kept.value_expr
            if isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
                item = f"{facts.code(value)}.item()"
            else:
                item = f"({facts.code(value)}).item()"
            how = "appended to" if kept.container else "added to"
            yield self.report(facts, kept.statement, edits=[codemods.replace_node(facts, value, item)],
                              carrier=kept.holder.text, value=facts.code(value), how=how)
