"""The cheap screen before libcst: CPython's own parser finds whether a file calls backward or grad.

Text that merely mentions `backward` (docstrings, comments, "backward compatibility") never reaches
libcst. The same walk collects which names the program treats as torch modules (`model.parameters()`,
`net.train()`), which the model uses to tell a model call from any other call.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass

from gradguard.analysis import api
from gradguard.analysis.api import torch_tensor
from gradguard.analysis.knowledge import (
    BACKWARD_FUNCTIONS,
    GRAD_FUNCTIONS,
    MODULE_EVIDENCE_METHODS,
)

# The names a call that runs a backward pass goes by: a method, or a function's last part.
_CALL_NAMES = api.backward_methods() | {name.rsplit(".", 1)[-1] for name in BACKWARD_FUNCTIONS | GRAD_FUNCTIONS}


@dataclass(frozen=True)
class Screen:
    """What the screen found: whether any finding is possible, and names used as modules."""

    relevant: bool
    modules: frozenset[str]


def dotted(node: ast.expr) -> str | None:
    """`a.b.c` for a chain of attributes on a name, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _call_names() -> frozenset[str]:
    """`_CALL_NAMES`, with the helpers the project declares to run a backward (`[tool.gradguard.api]`
    calls-backward, in force for the analysis running now) by their own names."""
    declared = api.declared_facts()
    if not declared:
        return _CALL_NAMES
    return _CALL_NAMES | {fact.name.rsplit(".", 1)[-1] for fact in declared if fact.backward is not None}


def calls_backward(tree: ast.AST) -> bool:
    """Whether the code under `tree` calls backward or grad (or passes retain_graph/create_graph)."""
    names = _call_names()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in names:
            return True
        if isinstance(func, ast.Name) and func.id in names:
            return True
        if any(k.arg in torch_tensor.GRAPH_KEYWORDS for k in node.keywords):
            return True
    return False


def screen(source: str) -> Screen | None:
    """Screen a source text; None when CPython cannot parse it (libcst will report why)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    relevant = False
    modules: set[str] = set()
    names = _call_names()
    steps = api.framework_steps()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in steps:
            relevant = True  # a framework backward()s what it returns (Lightning's `training_step`)
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr in names:
                relevant = True
            elif func.attr in MODULE_EVIDENCE_METHODS:
                receiver = dotted(func.value)
                if receiver is not None:
                    modules.add(receiver)
        elif isinstance(func, ast.Name) and func.id in names:
            relevant = True
        if not relevant and any(k.arg in torch_tensor.GRAPH_KEYWORDS for k in node.keywords):
            relevant = True
    return Screen(relevant, frozenset(modules))
