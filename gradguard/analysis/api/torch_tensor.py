"""Methods of torch.Tensor that the generated table cannot tell, or that matter most."""

from __future__ import annotations

from gradguard.analysis.api.facts import (
    Backward,
    Callback,
    Fact,
    Receiver,
    Returns,
    Role,
    When,
    facts,
)

T = Receiver.TENSOR

# The tensor method that runs a backward pass from its receiver.
BACKWARD = "backward"
# The methods fixes write: a detached tensor, a Python number, a copy on the CPU.
DETACH = "detach"
NUMBER = "item"
CPU = "cpu"
# The attribute a backward accumulates a leaf's gradient into (`p.grad`).
GRADIENT = "grad"
# The attribute of a leaf's gradient accumulator (the graph node at the end of a path) holding the leaf.
LEAF = "variable"
# The keyword of `backward` and `torch.autograd.grad` that keeps the graph for another pass, and the
# one that builds a graph of the backward itself (which keeps the graph too).
RETAIN_GRAPH = "retain_graph"
CREATE_GRAPH = "create_graph"
# `retain_variables` is the name of `retain_graph` before PyTorch 0.4 (tutorials of that time use it).
RETAIN_KEYWORDS = (RETAIN_GRAPH, "retain_variables")
GRAPH_KEYWORDS = (*RETAIN_KEYWORDS, CREATE_GRAPH)
# `tensor.backward(gradient, retain_graph, create_graph)`: where the last two may be passed by position.
BACKWARD_RETAIN = (1, RETAIN_GRAPH)
BACKWARD_CREATE = (2, CREATE_GRAPH)

FACTS: tuple[Fact, ...] = (
    Fact(BACKWARD, T, backward=Backward.BACKWARD, root=Role.RECEIVER, returns=Returns.NONE),
    Fact(DETACH, T, returns=Returns.CUT, cuts=Role.RESULT, shares_storage=True),
    # numpy() raises on a tensor that requires grad; either way its result has no graph.
    *facts((NUMBER, "tolist", "numpy", "__float__", "__int__", "__bool__", "size", "dim", "numel",
            "nelement", "data_ptr", "stride", "element_size", "is_contiguous", "get_device"), T,
           returns=Returns.VALUE),
    *facts(("argmax", "argmin", "argsort", "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite",
            "nonzero", "any", "all", "long", "int", "bool", "byte", "short", "char"), T, returns=Returns.CUT),
    Fact("detach_", T, returns=Returns.RECEIVER, inplace=True, keeps_history=False, cuts=Role.RECEIVER),
    Fact("requires_grad_", T, returns=Returns.RECEIVER, sets_requires_grad=True),
    *facts(("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"), T, returns=Returns.FRESH,
           requires_grad_kwarg=True),
    # In-place ops keep the receiver's history: the new node sits on top of the old graph. That
    # includes resets: `h.zero_()` or `h.fill_(0)` on a non-leaf still carries the old graph.
    *facts(("add_", "sub_", "mul_", "div_", "clamp_", "copy_", "addcmul_", "addcdiv_", "pow_", "exp_", "log_",
            "sigmoid_", "tanh_", "relu_", "masked_fill_", "index_add_", "scatter_", "scatter_add_", "normal_",
            "uniform_", "lerp_", "sqrt_", "neg_", "abs_", "t_", "transpose_", "unsqueeze_", "squeeze_",
            "clamp_min_", "clamp_max_", "zero_", "fill_"), T,
           returns=Returns.RECEIVER, inplace=True, keeps_history=True),
    # In-place random fills: each call draws other numbers.
    *facts(("normal_", "uniform_", "bernoulli_", "random_", "exponential_", "cauchy_", "log_normal_",
            "geometric_"), T, draws=True),
    *facts(("register_hook", "register_post_accumulate_grad_hook"), T, returns=Returns.VALUE,
           calls=Callback(0, when=When.BACKWARD, passes=("grad",))),
    Fact("retain_grad", T, returns=Returns.NONE),
    # Methods whose backward needs no saved tensor (generated facts agree; these are the common ones).
    *facts(("view", "view_as", "reshape", "reshape_as", "unflatten", "squeeze", "unsqueeze",
            "permute", "transpose", "t", "expand", "expand_as", "chunk", "split", "narrow", "movedim", "unbind",
            "__getitem__"), T, returns=Returns.VIEW, saves=False),
    # Attributes that are views of the tensor (`w.T`): a write into `w` changes them.
    *facts(("T", "mT", "H", "mH"), T, returns=Returns.VIEW),
    # flatten, contiguous: a view when the layout allows, else a copy.
    *facts(("flatten", "contiguous", "repeat", "to", "float", "double", "half", "bfloat16", "cuda", "cpu", "type", "type_as",
            "clone", "sum", "mean", "add", "sub", "neg"), T, returns=Returns.DERIVED, saves=False),
)
