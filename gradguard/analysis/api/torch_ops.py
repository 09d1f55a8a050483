"""The generated table of torch ops (torch_ops.json), read lazily and without importing torch."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from gradguard.analysis.api.facts import Fact, Receiver, Returns, Role

TENSOR_PREFIX = "torch.Tensor."
# Labels of argument lists whose first argument carried a graph (see tools/generate_torch_facts.py).
_GRAPH_ARGUMENTS = frozenset({"V", "M", "P", "S", "U", "C", "X3", "X4", "X5", "L[V,V]"})
SEPARATOR = ";"


@cache
def table() -> dict[str, Any]:
    """The whole JSON document: `torch` (the version it was generated with), `ops`, `skipped`."""
    from importlib import resources

    text = resources.files(__package__).joinpath("torch_ops.json").read_text(encoding="utf-8")
    return json.loads(text)


def to_fact(qualified: str, entry: dict[str, Any]) -> Fact:
    """The typed fact for one generated entry (`torch.Tensor.x` becomes method `x` on a tensor)."""
    receiver = Receiver.TENSOR if qualified.startswith(TENSOR_PREFIX) else None
    name = qualified.removeprefix(TENSOR_PREFIX) if receiver else qualified
    from_graph = entry["args"].split(";")[0] in _GRAPH_ARGUMENTS
    inplace = bool(entry.get("inplace"))
    if entry["out"] == "none":
        returns = Returns.NONE
    elif entry["out"] == "value":
        returns = Returns.VALUE
    elif inplace and entry.get("returns-input"):
        returns = Returns.RECEIVER
    elif not entry["graph"]:
        returns = Returns.CUT if from_graph else Returns.FRESH
    else:
        returns = Returns.VIEW if entry.get("view") else Returns.DERIVED
    keeps = entry.get("keeps") if inplace else None
    return Fact(
        name,
        receiver,
        returns=returns,
        saves=entry.get("saves"),
        saves_result=bool(entry.get("saves-result")),
        inplace_option=bool(entry.get("inplace-option")),
        inplace=inplace,
        keeps_history=keeps,
        cuts=Role.RECEIVER if inplace and keeps is False else None,
        source="torch",
    )


def module_fact(qualified: str, entry: dict[str, Any]) -> Fact:
    """The typed fact for one generated torch.nn module class."""
    return Fact(
        qualified,
        returns=Returns.MODULE,
        saves=entry.get("saves"),
        saves_result=bool(entry.get("saves-result")),
        keeps_input=entry.get("keeps-input"),
        inplace_position=entry.get("inplace-position"),
        parameterless=entry["params"] == 0 and not entry["holds-modules"],
        keeps_weights=entry.get("keeps-weights"),
        parameters=tuple(entry.get("parameter-names", ())),
        source="torch",
    )


@cache
def generated_facts() -> tuple[Fact, ...]:
    """Every generated entry (ops, then modules) as a typed fact."""
    ops = tuple(to_fact(name, entry) for name, entry in table()["ops"].items())
    return ops + tuple(module_fact(name, entry) for name, entry in table()["modules"].items())


def keeps_its_result(qualified: str, given: list[bool]) -> bool:
    """Whether a call of the generated op `qualified` makes a node that keeps its own output, for a
    call whose arguments (the receiver first, for a method) are `given`, each True when it is a
    literal number: as probed (no literal number where a tensor was passed: `x.pow(2)` is another
    overload), or with one argument more where the op was probed with a `dim` too (`softmax(x,
    dim=1)`; `max(x, dim=1)` returns values and indices, and keeps neither)."""
    entry = table()["ops"].get(qualified)
    if entry is None or not entry.get("saves-result"):
        return False
    labels = entry["args"].split(SEPARATOR)
    if any(number and label in _GRAPH_ARGUMENTS for number, label in zip(given, labels)):
        return False
    if len(given) <= len(labels):
        return True
    return len(given) == len(labels) + 1 and bool(entry.get("saves-result-dim"))


def probed_arity(qualified: str) -> int | None:
    """How many arguments the generated entry was probed with: its facts hold for that form of the
    call (one argument of `torch.where` gives indices, three a differentiable selection). None for
    an op the table does not hold."""
    entry = table()["ops"].get(qualified)
    return None if entry is None else len(entry["args"].split(SEPARATOR))


def integer_result(qualified: str) -> bool:
    """True when the op, given a tensor that carries a graph, returns only integer or bool tensors:
    such results can never carry a graph, whatever the other arguments."""
    entry = table()["ops"].get(qualified)
    if entry is None or entry["args"].split(";")[0] not in _GRAPH_ARGUMENTS:
        return False
    return entry.get("dtype") is not None and "float" not in entry["dtype"]
