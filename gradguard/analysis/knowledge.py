"""The analysis's older view of API facts, kept for its callers: name sets derived from `api`.

Each public name keeps its type (a frozenset of names, a prefix string); every value is computed from
the typed facts of `gradguard.analysis.api` on first use (PEP 562), so importing this module costs
nothing and no fact is written twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gradguard.analysis import api
from gradguard.analysis.api import distributions, packages, torch_ops, torch_tensor
from gradguard.analysis.api.facts import (
    Backward,
    Fact,
    GradMode,
    Receiver,
    Returns,
    Role,
)
from gradguard.analysis.api.packages import TORCH


def _names(keep: Callable[[Fact], bool], receiver: Receiver | None | str = None) -> frozenset[str]:
    """Names of the merged facts for `receiver` ("any" for methods of every receiver) that `keep`."""
    return frozenset(
        f.name for f in api.all_facts()
        if (f.receiver is not None if receiver == "any" else f.receiver is receiver) and keep(f)
    )


def _torch_tensor_cuts() -> frozenset[str]:
    tensor = _names(lambda f: f.returns in (Returns.CUT, Returns.VALUE) and not f.generated, Receiver.TENSOR)
    integer = _names(lambda f: torch_ops.integer_result(torch_ops.TENSOR_PREFIX + f.name), Receiver.TENSOR)
    return tensor | integer


def _cut_functions() -> frozenset[str]:
    plain = _names(lambda f: not f.generated and f.backward is None and (
        f.returns in (Returns.CUT, Returns.VALUE, Returns.NONE) or f.grad_mode is not None))
    integer = _names(lambda f: f.name.startswith(TORCH + ".") and torch_ops.integer_result(f.name))
    # Generated from a call on a tensor with a graph whose result had none (`torch.detach(x)`).
    generated = _names(lambda f: f.generated and f.returns is Returns.CUT)
    return plain | integer | generated


def _lightning() -> frozenset[str]:
    return _names(lambda f: f.base is not None and f.base.manual_flag is not None)


_DERIVED: dict[str, Callable[[], Any]] = {
    # Calls that start a backward pass over their first argument (or over the receiver for methods).
    "BACKWARD_FUNCTIONS": lambda: _names(lambda f: f.backward is Backward.BACKWARD and "." in f.name
                                         and f.name.startswith(TORCH + ".")),
    "GRAD_FUNCTIONS": lambda: _names(lambda f: f.backward is Backward.GRAD),
    # Methods of containers that read them without effect (`d.items()`): iterating one again gives
    # the same items while the container is unchanged.
    "PURE_METHODS": lambda: _names(lambda f: f.pure, Receiver.CONTAINER),
    # Methods whose result no longer carries the receiver's graph.
    "CUT_METHODS": _torch_tensor_cuts,
    # Methods whose result is a Python value (a number, a list, a shape), not a tensor.
    "VALUE_METHODS": lambda: _names(lambda f: f.returns is Returns.VALUE and not f.generated, Receiver.TENSOR),
    # In-place methods that cut the receiver's graph, or that set its requires_grad flag.
    "INPLACE_CUT_METHODS": lambda: _names(lambda f: f.cuts is Role.RECEIVER and not f.generated
                                          or f.sets_requires_grad, Receiver.TENSOR),
    # In-place methods that add an operation on top of the receiver's own graph (it is kept).
    "INPLACE_OPS": lambda: _names(lambda f: f.inplace and f.keeps_history is True, Receiver.TENSOR),
    # Builtins and library functions whose result carries no graph at all.
    "CUT_FUNCTIONS": _cut_functions,
    # Factories of fresh tensors: no graph unless `requires_grad=True` makes them leaves.
    "FACTORIES": lambda: _names(lambda f: f.returns is Returns.FRESH and not f.generated
                                and f.name.startswith(TORCH + ".")),
    "PARAMETER_TYPES": lambda: _names(lambda f: f.returns is Returns.LEAF),
    # Context managers that switch graph building off (or on again) in their block.
    "NO_GRAD": lambda: _names(lambda f: f.grad_mode in (GradMode.OFF, GradMode.INFERENCE)),
    "ENABLE_GRAD": lambda: _names(lambda f: f.grad_mode is GradMode.ON),
    "SET_GRAD_ENABLED": lambda: _names(lambda f: f.grad_mode is GradMode.SET),
    # Recurrent modules and the shape of the state they return.
    "RECURRENT_TUPLE_STATE": lambda: _names(lambda f: f.state == "tuple"),
    "RECURRENT_TENSOR_STATE": lambda: _names(lambda f: f.state == "tensor"),
    # Cells return the new state itself: `(h, c)` for an LSTM cell.
    "RECURRENT_TUPLE_CELLS": lambda: _names(lambda f: f.state == "cell-tuple"),
    # torch.nn classes without parameters: calling them only combines their inputs.
    "PARAMETERLESS_MODULES": lambda: _names(lambda f: f.parameterless),
    # Optimizers whose `step(closure)` evaluates the closure more than once.
    "MULTI_CLOSURE_OPTIMIZERS": lambda: frozenset(
        f.name.removesuffix(".step") for f in api.all_facts()
        if f.receiver is None and f.name.endswith(".step") and f.calls is not None and f.calls.times > 1),
    # Methods that show a receiver is a torch.nn.Module (or a model wrapping one).
    "MODULE_EVIDENCE_METHODS": lambda: _names(lambda f: f.evidence, Receiver.MODULE),
    # torch.distributions: constructing one from parameters builds graph; `sample()` does not.
    "DISTRIBUTION_PREFIX": lambda: distributions.PREFIX,
    # Base classes whose training loop calls backward on what `training_step` returns.
    "LIGHTNING_MODULES": _lightning,
    # The attributes that, set False, hand backward to the user; the methods backward() runs on otherwise.
    "MANUAL_FLAGS": lambda: frozenset(f.base.manual_flag for f in api.all_facts()
                                      if f.base is not None and f.base.manual_flag is not None),
    "MANUAL_BACKWARD_ON": lambda: frozenset(m for f in api.all_facts()
                                            if f.base is not None and f.base.manual_flag is not None
                                            for m in f.base.backward_on),
    # Trainers that call backward on what an overridden method returns: (base class, method).
    "FRAMEWORK_BACKWARD": lambda: frozenset(
        (f.name, method) for f in api.all_facts()
        if f.base is not None and f.name not in _lightning() for method in f.base.backward_on),
    # The key of a dict a framework's step returns that holds the loss it backward-s
    # (Lightning's `training_step` may return `{"loss": loss, ...}`).
    "FRAMEWORK_LOSS_KEYS": lambda: frozenset(
        key for f in api.all_facts() if f.base is not None for key in f.base.loss_keys),
    "RETAIN_GRAPH_KEYWORDS": lambda: frozenset(torch_tensor.RETAIN_KEYWORDS),
    # Wrappers that hand a module through unchanged as far as graphs go.
    "MODULE_WRAPPERS": lambda: _names(lambda f: f.returns is Returns.ARGUMENT and f.computes is None),
    "DATA_FUNCTIONS": lambda: _names(lambda f: f.returns is Returns.DATA),
    # Methods every torch.nn.Module (or LightningModule) has: never a parameter of the same name.
    "MODULE_METHODS": lambda: _names(lambda f: True, Receiver.MODULE) | _names(lambda f: True, Receiver.LIGHTNING),
    # A module's methods that iterate its submodules (`for m in self.modules(): m.reset()`).
    "ATTRIBUTE_TESTS": lambda: _names(lambda f: f.attribute_test),
    "CLASS_TESTS": lambda: _names(lambda f: f.class_test),
    # Builtins without effects whose result is fixed by their arguments: a test over one is stable.
    "PURE_CALLS": lambda: _names(lambda f: f.pure),
    # Builtins that iterate their arguments: what they are given is data.
    "ITERATING_CALLS": lambda: _names(lambda f: f.iterates),
    # Optimizer methods that update the weights in place.
    "WEIGHT_UPDATES": lambda: _names(lambda f: f.updates_weights, Receiver.OPTIMIZER),
    "GRAD_RESETS": lambda: _names(lambda f: f.resets_grads, Receiver.OPTIMIZER),
    "SUBMODULE_METHODS": lambda: _names(lambda f: f.submodules is not None, Receiver.MODULE),
    "ALL_SUBMODULE_METHODS": lambda: _names(lambda f: f.submodules == "all", Receiver.MODULE),
    "NAMED_SUBMODULE_METHODS": lambda: _names(lambda f: f.submodules is not None and f.named, Receiver.MODULE),
    # Containers of modules: iterating or indexing them gives the modules back.
    "MODULE_CONTAINERS": lambda: _names(lambda f: f.container),
    # Containers keyed by name (a ModuleDict): `items()` gives (name, module) pairs.
    "KEYED_MODULE_CONTAINERS": lambda: _names(lambda f: f.container and f.submodules is None),
    # Containers whose iteration gives the modules they hold (`for layer in self.layers:`).
    "ITERATED_MODULE_CONTAINERS": lambda: _names(lambda f: f.container and f.submodules == "items"),
    # Tensor methods that make a fresh tensor (no graph) shaped or typed like the receiver.
    "FRESH_METHODS": lambda: _names(lambda f: f.returns is Returns.FRESH and not f.generated, Receiver.TENSOR),
    # Operations whose backward needs no saved tensor: backward-ing through them a second time works,
    # so graph nodes made by them alone never cause the error.
    "NON_SAVING_METHODS": lambda: _names(lambda f: f.saves is False, Receiver.TENSOR),
    "NON_SAVING_FUNCTIONS": lambda: _names(lambda f: f.saves is False and f.name.startswith(TORCH + ".")),
    # nn.Module methods that return the module itself (`model = Net().to(device)`).
    "MODULE_RETURNS_SELF": lambda: _names(lambda f: f.returns is Returns.RECEIVER, Receiver.MODULE),
    # Base classes of custom autograd functions (their forward and backward build no graph).
    # Top-level packages known from facts, never by reading their source.
    "KNOWN_PACKAGES": lambda: packages.KNOWN,
    "AUTOGRAD_FUNCTIONS": lambda: _names(lambda f: f.base is not None and bool(f.base.graph_free)),
}

# The compatibility names, all derived.
NAMES: tuple[str, ...] = tuple(sorted(_DERIVED))


def __getattr__(name: str) -> Any:
    derive = _DERIVED.get(name)
    if derive is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = derive()
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_DERIVED))

