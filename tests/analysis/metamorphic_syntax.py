"""Syntax helpers of the mechanical rewrites in `metamorphic.py`: what a statement reads and binds,
the training loops of a block, renaming variables."""

from __future__ import annotations

import libcst as cst

Files = dict[str, str]


def marked_rows(source: str) -> set[int]:
    return {i for i, line in enumerate(source.splitlines(), 1) if "# [GG" in line}


def statement_rows(module: cst.Module) -> dict[cst.CSTNode, tuple[int, int]]:
    from libcst.metadata import MetadataWrapper, PositionProvider

    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    return {node: (pos.start.line, pos.end.line) for node, pos in positions.items()
            if isinstance(node, cst.BaseStatement)}


def names_read(node: cst.CSTNode) -> set[str]:
    found: set[str] = set()

    class Reader(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.add(name.value)

        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            attribute.value.visit(self)
            return False

        def visit_Arg(self, arg: cst.Arg) -> bool:
            arg.value.visit(self)
            return False

    node.visit(Reader())
    return found


def assigned_at_top(module: cst.Module) -> set[str]:
    """Names bound at module level by assignments and loops (not by def, class or import)."""
    names: set[str] = set()

    def targets(target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            names.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                targets(element.value)

    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign):
                    for t in small.targets:
                        targets(t.target)
                elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                    targets(small.target)
        elif isinstance(statement, cst.For):
            targets(statement.target)
    return names


def is_import(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body)


def calls_backward(node: cst.CSTNode) -> bool:
    found = False

    class Finder(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            nonlocal found
            found = found or (isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward")

    node.visit(Finder())
    return found


def training_loops(body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    return [s for s in body if isinstance(s, (cst.For, cst.While)) and calls_backward(s)]


def bound_anywhere(node: cst.CSTNode) -> set[str]:
    """The plain names a statement binds at any depth (not inside the functions or classes it defines)."""
    found: set[str] = set()

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, inner: cst.FunctionDef) -> bool:
            found.add(inner.name.value)
            return False

        def visit_ClassDef(self, inner: cst.ClassDef) -> bool:
            found.add(inner.name.value)
            return False

        def visit_Lambda(self, inner: cst.Lambda) -> bool:
            return False

        def visit_AssignTarget(self, target: cst.AssignTarget) -> None:
            found.update(target_names(target.target))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            found.update(target_names(node.target))

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            found.update(target_names(node.target))

        def visit_For(self, node: cst.For) -> None:
            found.update(target_names(node.target))

        def visit_AsName(self, alias: cst.AsName) -> None:
            found.update(target_names(alias.name))

    node.visit(Finder())
    return found


def target_names(target: cst.CSTNode) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(target_names(e.value) for e in target.elements))
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return set()


def bound_in_nested_scopes(node: cst.CSTNode) -> set[str]:
    """Names that a function, lambda or class inside `node` binds for itself (parameters, locals,
    global/nonlocal): renaming them there would change another variable."""
    found: set[str] = set()

    class Finder(cst.CSTVisitor):
        def visit_Param(self, param: cst.Param) -> None:
            found.add(param.name.value)

        def visit_FunctionDef(self, function: cst.FunctionDef) -> None:
            found.update(assigned_at_top(cst.Module(body=list(function.body.body)))  # type: ignore[arg-type]
                         if isinstance(function.body, cst.IndentedBlock) else set())

        def visit_Global(self, node: cst.Global) -> None:
            found.update(item.name.value for item in node.names)

        def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
            found.update(item.name.value for item in node.names)

    node.visit(Finder())
    return found


def bound_by_other_statements(node: cst.CSTNode) -> set[str]:
    """Names bound by `for`, `with ... as`, `except ... as`, `del`, imports or walrus inside `node`."""
    found: set[str] = set()

    class Finder(cst.CSTVisitor):
        def visit_For(self, loop: cst.For) -> None:
            found.update(names_read(loop.target))

        def visit_AsName(self, alias: cst.AsName) -> None:
            found.update(names_read(alias.name))

        def visit_Del(self, node: cst.Del) -> None:
            found.update(names_read(node.target))

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            found.update(names_read(node.target))

    node.visit(Finder())
    return found


def contains(outer: cst.CSTNode, node: cst.CSTNode) -> bool:
    found = False

    class Finder(cst.CSTVisitor):
        def on_visit(self, child: cst.CSTNode) -> bool:
            nonlocal found
            found = found or child is node
            return not found

    outer.visit(Finder())
    return found


def fresh(name: str, module: cst.Module) -> str:
    """`name`, or `name` with a number, whichever the program does not use."""
    used = names_read(module)
    number = 1
    candidate = name
    while candidate in used:
        number += 1
        candidate = f"{name}{number}"
    return candidate


class Rename(cst.CSTTransformer):
    """Every use of some variables (read or bound) replaced by an expression (`self.model`,
    `state["h"]`); attribute names, keywords and parameters are not variables and stay."""

    def __init__(self, replacements: dict[str, str]) -> None:
        self.replacements = {name: cst.parse_expression(text) for name, text in replacements.items()}

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return False

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        return updated.with_changes(value=updated.value.visit(self))

    def visit_Arg(self, node: cst.Arg) -> bool:
        return False

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(value=updated.value.visit(self))

    def visit_Param(self, node: cst.Param) -> bool:
        return False

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self.replacements.get(updated.value, updated)

    def in_targets(self, small: cst.BaseSmallStatement) -> cst.BaseSmallStatement:
        """An assignment with the variables renamed in its targets only."""
        if isinstance(small, cst.Assign):
            return small.with_changes(targets=[t.with_changes(target=t.target.visit(self)) for t in small.targets])
        return small.with_changes(target=small.target.visit(self))  # type: ignore[attr-defined]


def all_blocks(node: cst.CSTNode) -> list[cst.BaseStatement]:
    """Every statement inside `node`, at any depth (not inside nested functions or classes)."""
    found: list[cst.BaseStatement] = []

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, inner: cst.FunctionDef) -> bool:
            return inner is node

        def visit_ClassDef(self, inner: cst.ClassDef) -> bool:
            return False

        def on_visit(self, child: cst.CSTNode) -> bool:
            if isinstance(child, cst.BaseStatement) and child is not node:
                found.append(child)
            return super().on_visit(child)

    node.visit(Finder())
    return found


def blocks(module: cst.Module) -> list[list[cst.BaseStatement]]:
    """Every block of statements of the program (the module's, a function's, a loop's, an `if`'s), outer
    blocks first; class bodies are not blocks of a training program."""
    blocks: list[list[cst.BaseStatement]] = [list(module.body)]

    class Finder(cst.CSTVisitor):
        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
            blocks.append(list(node.body))

    module.visit(Finder())
    return blocks
