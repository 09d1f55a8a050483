"""GG008: a manual `loss.backward()` in a Lightning `training_step` with automatic optimization."""

from __future__ import annotations

from collections.abc import Iterator

from gradguard import causes as model
from gradguard import codemods
from gradguard.analysis.facts import CallKind, Cause, Conflict, FileFacts
from gradguard.analysis.values import CallInfo
from gradguard.model import Diagnostic, Related
from gradguard.rules import Decision, Rule


class FrameworkCallsBackward(Rule):
    """Lightning backward-s what `training_step` returns; a manual backward before it frees the graph."""

    code = "GG008"

    def decisions(self, facts: FileFacts) -> Iterator[Decision]:
        roots = {facts.span(manual.node): manual.root_text for manual in map(_manual, facts.conflicts)
                 if manual is not None}
        for diagnostic in self.check(facts):
            yield Decision(self.code, diagnostic.span, model.Cause.FRAMEWORK,
                           model.fix_kind(model.Cause.FRAMEWORK, model.Evidence()), roots.get(diagnostic.span, ""))

    def check(self, facts: FileFacts) -> Iterator[Diagnostic]:
        for conflict in facts.conflicts:
            manual = _manual(conflict)
            if manual is None:
                continue
            try:
                edits = [codemods.remove_statement(facts, manual.statement)] if manual.statement is not None else []
            except KeyError:  # on the line of its `if` (`if manual: loss.backward()`), or in no known file
                edits = []
            framework_call = conflict.failing if conflict.failing.kind is CallKind.FRAMEWORK else conflict.freed_by
            framework = framework_call.root_text
            related = [Related(facts.span(framework_call.node.name), f"{framework} calls backward on what this returns")] \
                if hasattr(framework_call.node, "name") else []
            yield self.report(facts, manual.node, related=related, edits=edits, root=manual.root_text,
                              function=framework_call.function.rsplit(".", 1)[-1], framework=framework)


def _manual(conflict: Conflict) -> CallInfo | None:
    """The user's own backward of a conflict with the framework's (None for other conflicts)."""
    if conflict.cause is not Cause.FRAMEWORK:
        return None
    manual = conflict.freed_by if conflict.failing.kind is CallKind.FRAMEWORK else conflict.failing
    return None if manual.kind is CallKind.FRAMEWORK else manual
