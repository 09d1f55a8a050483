"""Custom autograd.Function: forward and backward build no graph; `apply` joins the inputs' graphs."""

from __future__ import annotations

from gradguard.analysis.api.facts import BaseClass, Fact, Returns, facts

FACTS: tuple[Fact, ...] = (
    *facts(("torch.autograd.Function", "torch.autograd.function.Function"), returns=Returns.UNKNOWN,
           base=BaseClass(graph_free=("forward", "backward"), joins=("apply",))),
    Fact("torch.autograd.function.once_differentiable", returns=Returns.FUNCTION),
)
