"""torch.func: transforms return functions whose calls run their own, self-contained backward."""

from __future__ import annotations

from gradguard.analysis.api.facts import Callback, Fact, Returns, prefixed

FACTS: tuple[Fact, ...] = (
    *prefixed("torch.func.", ("grad", "grad_and_value", "jacrev", "jacfwd", "hessian", "vmap"),
              returns=Returns.FUNCTION),
    *prefixed("torch.func.", ("vjp", "jvp", "linearize"), returns=Returns.DERIVED, calls=Callback(0)),
    Fact("torch.func.functional_call", returns=Returns.DERIVED, calls=Callback(0, passes=("*args",))),
    Fact("torch.func.stack_module_state", returns=Returns.DATA),
)
