"""Qualified names from imports: `import torch.autograd as ag` makes `ag.grad` mean `torch.autograd.grad`.

Only imports are resolved here; a name assigned as a variable shadows an import (the interpreter
checks its environment first), so decisions are never made on a name's suffix.
"""

from __future__ import annotations

from functools import lru_cache

import libcst as cst

from gradguard.analysis.api.packages import ALIASES


@lru_cache(maxsize=1 << 16)  # nodes hash by identity and never change
def dotted(expr: cst.BaseExpression) -> str | None:
    """`a.b.c` for a chain of attributes on a name, else None."""
    parts: list[str] = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if isinstance(expr, cst.Name):
        parts.append(expr.value)
        return ".".join(reversed(parts))
    return None


def indexed(expr: cst.BaseExpression) -> str | None:
    """`dotted`, or `self.q_nets[]` for an item of a dotted container (`self.q_nets[i]`): the
    items of one list of modules are told apart by no index."""
    if isinstance(expr, cst.Subscript):
        base = dotted(expr.value)
        return f"{base}[]" if base is not None else None
    return dotted(expr)


def _module_name(node: cst.BaseExpression) -> str:
    name = dotted(node)
    return name or ""


def import_bindings(statement: cst.Import | cst.ImportFrom) -> dict[str, str]:
    """The local names one import statement binds, mapped to the qualified names they stand for."""
    bound: dict[str, str] = {}
    if isinstance(statement, cst.Import):
        for alias in statement.names:
            full = _module_name(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                bound[alias.asname.name.value] = full
            else:
                top = full.split(".")[0]
                bound[top] = top
        return bound
    dots = "." * len(statement.relative)
    module = _module_name(statement.module) if statement.module is not None else ""
    if dots:
        # A relative import names a module of the same project: `.models.Net`, resolved later.
        module = dots + module
    if isinstance(statement.names, cst.ImportStar):
        return bound
    for alias in statement.names:
        name = _module_name(alias.name)
        local = name
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            local = alias.asname.name.value
        bound[local] = f"{module}.{name}" if module and not module.endswith(".") else f"{module}{name}"
    return bound


def star_import(statement: cst.Import | cst.ImportFrom) -> str | None:
    """The module a `from M import *` takes every public name of (`.model` for `from .model import *`)."""
    if not isinstance(statement, cst.ImportFrom) or not isinstance(statement.names, cst.ImportStar):
        return None
    module = _module_name(statement.module) if statement.module is not None else ""
    return "." * len(statement.relative) + module


def qualify(expr: cst.BaseExpression, imports: dict[str, str]) -> str | None:
    """The qualified name `expr` refers to through `imports`, or None when it is not an imported name."""
    name = dotted(expr)
    if name is None:
        return None
    head, _, rest = name.partition(".")
    target = imports.get(head)
    if target is None:
        return None
    return f"{target}.{rest}" if rest else target


# Aliases that mean the same thing to users (the facts' home keeps them).
CANONICAL = ALIASES


def canonical(qualified: str) -> str:
    """Normalise re-exported module paths (`pytorch_lightning.X` is `lightning.pytorch.X`)."""
    module, _, attr = qualified.rpartition(".")
    for alias, target in CANONICAL.items():
        if module == alias:
            return f"{target}.{attr}"
    return qualified


def chains_overlap(first: str, second: str) -> bool:
    """Whether assigning one dotted chain can change the other (`args` and `args.lr`, not `arg`)."""
    return first == second or first.startswith(second + ".") or second.startswith(first + ".")


def targets_of(statement: cst.CSTNode | None) -> list[str]:
    """The names and attribute chains an assignment statement binds as a whole (`out, self.h = ...`
    gives `out` and `self.h`; `self.h[0] = ...` gives nothing)."""
    texts: list[str] = []

    def collect(node: cst.BaseExpression) -> None:
        if isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                collect(element.value)
        elif isinstance(node, (cst.Name, cst.Attribute)) and (text := dotted(node)) is not None:
            texts.append(text)

    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    collect(target.target)
            elif isinstance(small, cst.AnnAssign):
                collect(small.target)
    return texts
