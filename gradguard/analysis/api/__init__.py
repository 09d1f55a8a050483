"""Everything gradguard knows about library APIs, as typed facts, with one lookup.

One module per library (as astroid's `brain/`): each holds a `FACTS` tuple of `Fact`s written by
hand. The torch ops are also described by a table generated from torch itself (`torch_ops.json`, see
tools/generate_torch_facts.py); a hand fact for the same name refines the generated one field by field.
Facts a project declares in `[tool.gradguard.api]` come first.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import fields, replace
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING

from gradguard.analysis.api.facts import (
    Backward,
    BaseClass,
    Cache,
    Callback,
    Collects,
    Computes,
    Fact,
    Family,
    GradMode,
    Receiver,
    Returns,
    Role,
    When,
)
from gradguard.analysis.api.nn import FORWARD, INPLACE, TRAINING
from gradguard.analysis.api.torch_ops import generated_facts, keeps_its_result, probed_arity, table

if TYPE_CHECKING:
    from types import ModuleType

__all__ = [
    "FORWARD",
    "INPLACE",
    "TRAINING",
    "Backward",
    "BaseClass",
    "Cache",
    "Callback",
    "Collects",
    "Computes",
    "Fact",
    "Family",
    "GradMode",
    "Receiver",
    "Returns",
    "Role",
    "When",
    "all_facts",
    "backward_methods",
    "backward_name",
    "builtin_names",
    "declared",
    "declared_facts",
    "families",
    "family_of",
    "forward_hooks",
    "hand_facts",
    "keeps_its_result",
    "libraries",
    "lookup",
    "makes",
    "method",
    "probed_arity",
    "reference_nodes",
    "weight_updates",
]

# The facts a project declares in `[tool.gradguard.api]`, in force for the analysis running now
# (set by the engine around one file's analysis, the re-analyses of its fixes included).
_DECLARED: ContextVar[tuple[Fact, ...]] = ContextVar("gradguard_declared_api", default=())


@contextlib.contextmanager
def declared(facts: tuple[Fact, ...]) -> Iterator[None]:
    """Within it, the analysis reads `facts` as the project's own helpers."""
    token = _DECLARED.set(tuple(facts))
    try:
        yield
    finally:
        _DECLARED.reset(token)


def declared_facts() -> tuple[Fact, ...]:
    """The project's declared facts in force now (none outside `declared`)."""
    return _DECLARED.get()

# The library modules of this package, each holding a FACTS tuple; imported on first use.
LIBRARIES = ("torch_functions", "torch_tensor", "nn", "losses", "optim", "distributions", "data", "parametrize",
             "hooks", "checkpoint", "amp", "func", "autograd_function", "std_functools", "std_builtins", "std_random",
             "std_copy", "std_weakref", "std_argparse", "lightning", "accelerate", "deepspeed", "transformers",
             "mmengine")


@cache
def libraries() -> tuple[ModuleType, ...]:
    """The library modules, in LIBRARIES order."""
    return tuple(import_module(f"{__name__}.{name}") for name in LIBRARIES)


Key = tuple[str, Receiver | None]


def refine(base: Fact, over: Fact) -> Fact:
    """`base` with every field that `over` sets (differs from the default) taken from `over`."""
    defaults = Fact(over.name, over.receiver)
    changes = {f.name: getattr(over, f.name) for f in fields(Fact)
               if getattr(over, f.name) != getattr(defaults, f.name)}
    return replace(base, **changes)


@cache
def hand_facts() -> tuple[Fact, ...]:
    """The hand-written facts of every library module, in library order."""
    return tuple(fact for library in libraries() for fact in library.FACTS)


@cache
def _index() -> dict[Key, Fact]:
    index: dict[Key, Fact] = {fact.key: fact for fact in generated_facts()}
    for fact in hand_facts():
        known = index.get(fact.key)
        index[fact.key] = fact if known is None else replace(refine(known, fact), source="hand+torch")
    return index


@cache
def all_facts() -> tuple[Fact, ...]:
    """Every fact, generated and hand-written merged, sorted by name and receiver."""
    return tuple(sorted(_index().values(), key=lambda f: (f.name, f.receiver.value if f.receiver else "")))


def lookup(name: str, receiver: Receiver | None = None, project: Iterable[Fact] = ()) -> Fact | None:
    """The fact for a callable by qualified name (`receiver` None), or for the method `name` called
    on a receiver of that kind. `project` (the facts of `[tool.gradguard.api]`) is searched first."""
    for fact in project:
        if fact.name == name and fact.receiver is receiver:
            return fact
    return _index().get((name, receiver))


@cache
def _attributes() -> dict[Key, Fact]:
    return {fact.key: fact for library in libraries() for fact in getattr(library, "ATTRIBUTES", ())}


def attribute(name: str, *receivers: Receiver) -> Fact | None:
    """The fact for the attribute `name` (read, not called) of the first of `receivers` that has one."""
    index = _attributes()
    return next((index[(name, r)] for r in receivers if (name, r) in index), None)


def method(name: str, *receivers: Receiver) -> Fact | None:
    """The fact for the method `name` on the first of `receivers` that has one."""
    index = _index()
    return next((index[(name, r)] for r in receivers if (name, r) in index), None)


@cache
def families() -> tuple[Family, ...]:
    """The class families of every library module, longest prefix first."""
    found = [family for library in libraries() for family in getattr(library, "FAMILIES", ())]
    return tuple(sorted(found, key=lambda f: -len(f.prefix)))


def family_of(name: str) -> Family | None:
    """The family of the class `name` (its last part capitalised) by its longest prefix, if any."""
    if not name.rsplit(".", 1)[-1][:1].isupper():
        return None
    return next((f for f in families() if name.startswith(f.prefix)), None)


@cache
def backward_name(kind: Backward) -> str:
    """How messages name a backward pass of this kind: the tensor method (`backward`) or, for a pass
    that returns the gradients, the function (`torch.autograd.grad`)."""
    facts = [f for f in all_facts() if f.backward is kind and f.receiver in (Receiver.TENSOR, None)]
    return min(facts, key=lambda f: (f.receiver is not Receiver.TENSOR, f.name)).name


@cache
def backward_methods() -> frozenset[str]:
    """Methods that run a backward pass, on any receiver (`loss.backward()`, `accelerator.backward(loss)`)."""
    return frozenset(f.name for f in all_facts() if f.backward is not None and f.receiver is not None)


@cache
def backward_roots(method: str) -> frozenset[Role | None]:
    """What the backward pass of a method named so starts from, over every receiver that has one
    (`backward`: the receiver, a tensor, or the argument, an accelerator's)."""
    return frozenset(f.root for f in all_facts() if f.name == method and f.backward is not None
                     and f.receiver is not None)


@cache
def framework_steps() -> frozenset[str]:
    """Methods a training framework calls once per batch and backward()s what they return
    (Lightning's `training_step`, mmcv's `train_step`, the transformers Trainer's `compute_loss`)."""
    return frozenset(m for f in all_facts() if f.base is not None for m in f.base.backward_on)


@cache
def weight_updates() -> frozenset[str]:
    """Optimizer methods that update the weights in place (`step`)."""
    return frozenset(f.name for f in all_facts() if f.updates_weights and f.receiver is Receiver.OPTIMIZER)


@cache
def grad_resets() -> frozenset[str]:
    """Optimizer methods that reset the gradients (`zero_grad`)."""
    return frozenset(f.name for f in all_facts() if f.resets_grads and f.receiver is Receiver.OPTIMIZER)


@cache
def forward_hooks() -> tuple[Fact, ...]:
    """Module methods that register a callback run by each forward of the module."""
    return tuple(f for f in all_facts() if f.receiver is Receiver.MODULE and f.calls is not None
                 and f.calls.when is When.FORWARD)


@cache
def builtin_names() -> frozenset[str]:
    """Python's builtins the facts know (`len`, `zip`): called by their bare name, never imported."""
    return frozenset(f.name for f in all_facts() if f.receiver is None and "." not in f.name)


def makes(name: str) -> Returns | None:
    """What calling the class or function `name` makes: its own fact, else its family's; None if unknown."""
    fact = lookup(name)
    if fact is not None:
        return fact.returns
    family = family_of(name)
    return family.returns if family is not None else None


@cache
def reference_nodes() -> dict[str, int]:
    """The autograd nodes of the comparisons the facts know, each with the input that takes the
    reference it compares against (-1: either side): a loss whose own node receives its target
    (`MseLossBackward0`, input 1), a difference or a ratio (`SubBackward0`). How the runtime monitor
    sees what lint reads from a call's arguments."""
    found: dict[str, int] = {}
    ops = table()["ops"]
    for fact in hand_facts():
        entry = ops.get(fact.name)
        if fact.reference is None or entry is None or not entry.get("grad-fn"):
            continue
        position, keyword = fact.reference
        if position < 0 or keyword in entry.get("saved", ()):
            found[entry["grad-fn"]] = position
    return found
