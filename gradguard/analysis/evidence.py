"""What a function's body says about an argument whose caller the analysis does not see.

`def train(model, loader, optimizer)` analysed as an entry point: `model(x)` and `model.train()`
make `model` a module (its calls carry the graphs of their inputs and of its own parameters),
`optimizer.step()` an optimizer, `for x, y in loader` a source of fresh data. The same holds for
an attribute of an object (`self.model`) that the class's methods use so.
"""

from __future__ import annotations

from enum import Enum, auto

import libcst as cst

from gradguard.analysis import api
from gradguard.analysis import knowledge as K
from gradguard.analysis.api import Receiver, Returns
from gradguard.analysis.names import canonical, dotted, qualify
from gradguard.parse import walk


class Role(Enum):
    """What an unseen argument is used as."""

    MODULE = auto()
    CALLABLE = auto()  # only ever called: a module, or a function that builds data
    OPTIMIZER = auto()
    DATA = auto()


def roles_in(body: cst.CSTNode, imports: dict[str, str]) -> dict[str, Role]:
    """The role of each name or attribute chain (`model`, `self.model`) the code uses in one."""
    finder = _Uses()
    walk(body, finder)
    roles: dict[str, Role] = {}
    for name in finder.iterated:
        roles[name] = Role.DATA
    # `env.step(action)` is no optimizer's step: a step given an argument is one only on an object
    # whose gradients the code also resets (an LBFGS closure zeroes them).
    stepped = finder.stepped | (finder.stepped_with_argument & finder.reset)
    for name in stepped:
        if name not in finder.module_like:
            roles[name] = Role.OPTIMIZER
    for name in finder.called - stepped:
        roles[name] = Role.CALLABLE
    for name in finder.module_like:
        roles[name] = Role.MODULE
    return roles


def methods_called(body: cst.CSTNode) -> dict[str, set[str]]:
    """The methods the code calls on each plain name, other than those the API facts know on a module,
    an optimizer or a tensor (`model.observe(x)`: `observe` on `model`; `model.train()` is not one)."""
    from gradguard.parse import every_node

    found: dict[str, set[str]] = {}
    for node in every_node(body):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and isinstance(node.func.value, cst.Name):
            method = node.func.attr.value
            if method == api.FORWARD or method in K.MODULE_METHODS or api.method(
                    method, Receiver.MODULE, Receiver.OPTIMIZER, Receiver.TENSOR) is not None:
                continue
            found.setdefault(node.func.value.value, set()).add(method)
    return found


def annotated_role(annotation: cst.Annotation | None, imports: dict[str, str]) -> Role | None:
    """`model: nn.Module`, `opt: torch.optim.Optimizer`: what an annotation says."""
    if annotation is None:
        return None
    name = qualify(annotation.annotation, imports)
    if name is None:
        return None
    name = canonical(name)
    makes = api.makes(name)
    return _ANNOTATED.get(makes) if makes is not None else None


_ANNOTATED = {Returns.OPTIMIZER: Role.OPTIMIZER, Returns.MODULE: Role.MODULE, Returns.DATA: Role.DATA}


class _Uses(cst.CSTVisitor):
    def __init__(self) -> None:
        self.called: set[str] = set()
        self.module_like: set[str] = set()
        self.stepped: set[str] = set()
        self.stepped_with_argument: set[str] = set()
        self.reset: set[str] = set()
        self.iterated: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = dotted(func)
        if isinstance(func, (cst.Name, cst.Attribute)) and name is not None:
            if isinstance(func, cst.Attribute):
                receiver = dotted(func.value)
                method = func.attr.value
                if receiver is not None:
                    if method in K.WEIGHT_UPDATES:
                        positional = any(arg.keyword is None and not isinstance(arg.value, cst.Lambda)
                                         for arg in node.args)
                        (self.stepped_with_argument if positional else self.stepped).add(receiver)
                    elif method in K.GRAD_RESETS:
                        self.reset.add(receiver)
                    elif method == api.FORWARD or (
                            method in K.MODULE_EVIDENCE_METHODS and api.method(method, Receiver.OPTIMIZER) is None):
                        self.module_like.add(receiver)
                if method not in K.MODULE_METHODS and method not in K.WEIGHT_UPDATES:
                    # `self.model(x)` calls the attribute itself (a method call on `self` is not).
                    self.called.add(name)
            else:
                self.called.add(name)
        if isinstance(func, cst.Name) and func.value in K.ITERATING_CALLS and node.args:
            for arg in node.args:
                target = dotted(arg.value)
                if target is not None:
                    self.iterated.add(target)

    def visit_For(self, node: cst.For) -> None:
        target = dotted(node.iter)
        if target is not None:
            self.iterated.add(target)
