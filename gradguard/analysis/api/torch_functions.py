"""torch.* functions: backward and grad, factories, grad-mode switches, parameters, cuts.

Most torch ops need no hand fact: the generated table (torch_ops.json) says what they return and save.
"""

from __future__ import annotations

from gradguard.analysis.api.facts import (
    Backward,
    Fact,
    GradMode,
    Returns,
    Role,
    Writes,
    facts,
    prefixed,
)
from gradguard.analysis.api.torch_tensor import CREATE_GRAPH, RETAIN_GRAPH

# The two functions that run a backward pass (the runtime monitor wraps them); where each takes its
# roots, and its `retain_graph` and `create_graph` flags: (position, keyword).
BACKWARD_FUNCTION = "torch.autograd.backward"
GRAD_FUNCTION = "torch.autograd.grad"
BACKWARD_ROOTS = (0, "tensors")
BACKWARD_RETAIN = (2, RETAIN_GRAPH)
BACKWARD_CREATE = (3, CREATE_GRAPH)
GRAD_OUTPUTS = (0, "outputs")
GRAD_RETAIN = (3, RETAIN_GRAPH)
GRAD_CREATE = (4, CREATE_GRAPH)
ROOT_KEYWORDS = (BACKWARD_ROOTS[1], GRAD_OUTPUTS[1])
# The context manager a value is computed under to build no graph (what a "no grad at source" fix writes).
NO_GRAD_CONTEXT = "torch.no_grad"
# What `torch.autograd.grad` differentiates with respect to: its second argument, or this keyword.
GRAD_INPUTS = (1, "inputs")
# `nn.Parameter(data, requires_grad=True)`: where its flag is given (a running statistic made with False).
PARAMETER_REQUIRES_GRAD = (1, "requires_grad")

FACTS: tuple[Fact, ...] = (
    Fact(BACKWARD_FUNCTION, backward=Backward.BACKWARD, root=Role.ARGUMENT, returns=Returns.NONE),
    Fact(GRAD_FUNCTION, backward=Backward.GRAD, root=Role.ARGUMENT, returns=Returns.DERIVED),
    # Factories: a fresh tensor, a leaf that requires grad when asked with `requires_grad=True`.
    *prefixed("torch.", ("zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
                         "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like",
                         "rand_like", "randn_like", "randint_like", "tensor", "tril_indices", "triu_indices",
                         "empty_strided", "scalar_tensor", "sparse_coo_tensor"),
              returns=Returns.FRESH, requires_grad_kwarg=True),
    *prefixed("torch.", ("as_tensor", "from_numpy", "frombuffer"), returns=Returns.FRESH),
    # Random draws (the factories above, and the sampling functions).
    *prefixed("torch.", ("rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like",
                         "normal", "bernoulli", "multinomial", "poisson"), draws=True),
    *facts(("torch.nn.Parameter", "torch.nn.parameter.Parameter"), returns=Returns.LEAF),
    # Grad-mode switches, as context managers, decorators or plain calls.
    *facts((NO_GRAD_CONTEXT, "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"),
           returns=Returns.CONTEXT, grad_mode=GradMode.OFF),
    *facts(("torch.inference_mode", "torch.autograd.grad_mode.inference_mode"),
           returns=Returns.CONTEXT, grad_mode=GradMode.INFERENCE),
    *facts(("torch.enable_grad", "torch.autograd.enable_grad", "torch.autograd.grad_mode.enable_grad"),
           returns=Returns.CONTEXT, grad_mode=GradMode.ON),
    *facts(("torch.set_grad_enabled", "torch.autograd.set_grad_enabled",
            "torch.autograd.grad_mode.set_grad_enabled"), returns=Returns.CONTEXT, grad_mode=GradMode.SET),
    # Results that carry no graph whatever the arguments.
    *prefixed("torch.", ("is_tensor", "numel", "equal", "allclose", "manual_seed", "is_grad_enabled",
                         "is_floating_point", "is_complex"), returns=Returns.VALUE),
    *prefixed("torch.", ("argmax", "argmin", "argsort", "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf",
                         "isfinite", "nonzero", "multinomial", "bucketize", "searchsorted"), returns=Returns.CUT),
    # Given `max_norm`, they renormalise the looked-up rows of `weight` in place first.
    *facts(("torch.nn.functional.embedding", "torch.nn.functional.embedding_bag"),
           writes=Writes(1, keyword="weight", when="max_norm")),
    Fact("torch.save", returns=Returns.NONE),
    Fact("torch.compile", returns=Returns.ARGUMENT),
    # Ops whose backward needs no saved tensor (the generated table agrees; these are the common ones).
    *prefixed("torch.", ("cat", "stack", "sum", "mean", "flatten", "reshape", "squeeze", "unsqueeze",
                         "transpose", "permute", "add", "sub", "neg", "chunk", "split", "hstack", "vstack",
                         "concat", "concatenate", "unbind"), returns=Returns.DERIVED, saves=False),
)
