"""GG007: `torch.autograd.grad` without `retain_graph`/`create_graph` frees a graph used afterwards."""

from __future__ import annotations

import libcst as cst

from gradguard import causes as model
from gradguard import codemods
from gradguard.analysis.api.torch_tensor import CREATE_GRAPH, RETAIN_GRAPH
from gradguard.analysis.facts import Cause, Conflict, FileFacts
from gradguard.rules import ConflictRule, FixPlan


class GradFreesGraph(ConflictRule):
    """A backward or grad after `torch.autograd.grad` reaches the part of the graph grad freed."""

    code = "GG007"
    causes = frozenset({Cause.GRAD_FREED})

    def fix(self, facts: FileFacts, conflict: Conflict, option: model.Option) -> FixPlan:
        keyword = CREATE_GRAPH if option.kind is model.FixKind.CREATE_GRAPH else RETAIN_GRAPH
        call = conflict.freed_by.node
        edits = (codemods.set_keyword(facts, call, keyword, "True"),) if isinstance(call, cst.Call) else ()
        return FixPlan(edits, f"Pass `{keyword}=True` to `torch.autograd.grad`")
