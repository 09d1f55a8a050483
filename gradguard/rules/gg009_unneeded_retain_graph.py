"""GG009: `retain_graph=True` that no later backward or grad needs."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from gradguard import causes as model
from gradguard import codemods
from gradguard.analysis.api.torch_tensor import RETAIN_GRAPH
from gradguard.analysis.facts import FileFacts
from gradguard.model import Diagnostic
from gradguard.rules import Decision, Rule


class UnneededRetainGraph(Rule):
    """The graph is kept alive after backward, but nothing backward-s through it again."""

    code = "GG009"

    def decisions(self, facts: FileFacts) -> Iterator[Decision]:
        for diagnostic in self.check(facts):
            yield Decision(self.code, diagnostic.span, model.Cause.NEEDLESS_RETAIN,
                           model.fix_kind(model.Cause.NEEDLESS_RETAIN, model.Evidence()))

    def check(self, facts: FileFacts) -> Iterator[Diagnostic]:
        for retain in facts.needless_retains:
            call = retain.call.node
            edits = [codemods.drop_keyword(facts, call, RETAIN_GRAPH)] if isinstance(call, cst.Call) else []
            where = ("so every step keeps its saved tensors until the next step replaces them"
                     if retain.in_loop else "so its saved tensors stay in memory")
            yield self.report(facts, call, edits=edits, root=retain.call.root_text, where=where)
