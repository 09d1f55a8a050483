"""Mechanical rewrites of training scripts that keep what the program does, for metamorphic tests:
the analysis must give a rewritten fixture exactly the findings of the original.

Each rewrite takes a script's text and returns the files of the rewritten program (the script
first), or None when the script has no place the rewrite applies to.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable

import libcst as cst

Files = dict[str, str]

_BUILTINS = frozenset(dir(builtins))


def _marked_rows(source: str) -> set[int]:
    return {i for i, line in enumerate(source.splitlines(), 1) if "# [GG" in line}


def _statement_rows(module: cst.Module) -> dict[cst.CSTNode, tuple[int, int]]:
    from libcst.metadata import MetadataWrapper, PositionProvider

    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    return {node: (pos.start.line, pos.end.line) for node, pos in positions.items()
            if isinstance(node, cst.BaseStatement)}


def _names_read(node: cst.CSTNode) -> set[str]:
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


def _assigned_at_top(module: cst.Module) -> set[str]:
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


def _is_import(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body)


def definitions_to_module(source: str) -> Files | None:
    """The model classes and helpers moved into `lib.py`, imported by name from the script."""
    module = cst.parse_module(source)
    rows = _statement_rows(module)
    marked = _marked_rows(source)
    top_names = _assigned_at_top(module)
    moved: list[cst.BaseStatement] = []
    for statement in module.body:
        if not isinstance(statement, (cst.ClassDef, cst.FunctionDef)):
            continue
        start, end = rows[statement]
        if any(start <= row <= end for row in marked) or "<freed-by>" in module.code_for_node(statement):
            continue
        if _names_read(statement) & top_names:
            continue  # it reads the script's own globals: it cannot live elsewhere unchanged
        moved.append(statement)
    if not moved:
        return None
    imports = [s for s in module.body if _is_import(s)]
    names = ", ".join(s.name.value for s in moved)  # type: ignore[attr-defined]
    lib = module.with_changes(body=[*imports, *moved])
    last_import = max((module.body.index(s) for s in imports), default=-1)
    kept = [s for s in module.body if s not in moved]
    line = cst.parse_statement(f"from lib import {names}\n")
    position = kept.index(module.body[last_import]) + 1 if last_import >= 0 else 0
    script = module.with_changes(body=[*kept[:position], line, *kept[position:]])
    return {"train.py": script.code, "lib.py": lib.code}


class _ForToWhile(cst.CSTTransformer):
    """`for i in range(n)` as a counted `while`; `for x in xs` as `it = iter(xs)` +
    `while True: try: x = next(it) except StopIteration: break`."""

    def __init__(self) -> None:
        self.count = 0

    def leave_For(self, original: cst.For, updated: cst.For) -> cst.BaseStatement | cst.FlattenSentinel:
        if updated.orelse is not None or updated.asynchronous is not None:
            return updated
        self.count += 1
        it = f"_it{self.count}"
        target = cst.Module(body=[]).code_for_node(updated.target)
        iterable = cst.Module(body=[]).code_for_node(updated.iter)
        counted = _range_bound(updated.iter)
        if counted is not None and isinstance(updated.target, cst.Name) and not _continues(updated.body):
            # `for i in range(n)`: a counter (`i = 0; while i < n: ...; i += 1`).
            start = cst.parse_statement(f"{it} = 0\n")
            bind = cst.parse_statement(f"{target} = {it}\n")
            step = cst.parse_statement(f"{it} += 1\n")
            body = updated.body.with_changes(body=[bind, *updated.body.body, step])
            loop = cst.While(test=cst.parse_expression(f"{it} < {counted}"), body=body)
            return cst.FlattenSentinel([start.with_changes(leading_lines=updated.leading_lines), loop])
        header = cst.parse_statement(f"{it} = iter({iterable})\n")
        fetch = cst.parse_statement(
            f"try:\n    {target} = next({it})\nexcept StopIteration:\n    break\n")
        body = updated.body.with_changes(body=[fetch, *updated.body.body])
        loop = cst.While(test=cst.Name("True"), body=body, leading_lines=updated.leading_lines)
        return cst.FlattenSentinel([header, loop])


def _range_bound(iterable: cst.BaseExpression) -> str | None:
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "range" \
            and len(iterable.args) == 1 and iterable.args[0].keyword is None:
        return cst.Module(body=[]).code_for_node(iterable.args[0].value)
    return None


def _continues(body: cst.CSTNode) -> bool:
    found = False

    class Finder(cst.CSTVisitor):
        def visit_Continue(self, node: cst.Continue) -> None:
            nonlocal found
            found = True

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

    body.visit(Finder())
    return found


def for_to_while(source: str) -> Files | None:
    """Every `for` loop written as a `while True` loop over `next()`."""
    module = cst.parse_module(source)
    transformer = _ForToWhile()
    rewritten = module.visit(transformer)
    return {"train.py": rewritten.code} if transformer.count else None


class _GuardBackward(cst.CSTTransformer):
    def __init__(self) -> None:
        self.count = 0

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine,
                                  updated: cst.SimpleStatementLine) -> cst.BaseStatement:
        code = cst.Module(body=[]).code_for_node(updated)
        if ".backward(" not in code or len(updated.body) != 1 or not isinstance(updated.body[0], cst.Expr):
            return updated
        self.count += 1
        return cst.If(test=cst.parse_expression("LOG_BACKWARD"),
                      body=cst.IndentedBlock(body=[updated.with_changes(leading_lines=())]),
                      leading_lines=updated.leading_lines)


def backward_in_condition(source: str) -> Files | None:
    """Each backward statement under `if LOG_BACKWARD:` (a flag set once at the top)."""
    module = cst.parse_module(source)
    transformer = _GuardBackward()
    rewritten = module.visit(transformer)
    if not transformer.count:
        return None
    imports = [i for i, s in enumerate(rewritten.body) if _is_import(s)]
    at = imports[-1] + 1 if imports else 0
    flag = cst.parse_statement("LOG_BACKWARD = True\n")
    body = [*rewritten.body[:at], flag, *rewritten.body[at:]]
    return {"train.py": rewritten.with_changes(body=body).code}


def loop_into_function(source: str) -> Files | None:
    """The last top-level training loop moved into `def train(<what it uses>)`, called at once."""
    module = cst.parse_module(source)
    loops = [s for s in module.body if isinstance(s, (cst.For, cst.While))
             and ".backward(" in module.code_for_node(s)]
    if not loops:
        return None
    loop = loops[-1]
    index = module.body.index(loop)
    before = cst.Module(body=list(module.body[:index]))
    params = sorted(_names_read(loop) & _assigned_at_top(before))
    if any(_assigned_in(s, params) for s in module.body[index + 1:]):
        return None
    signature = ", ".join(params)
    function = cst.FunctionDef(
        name=cst.Name("train"),
        params=cst.Parameters(params=[cst.Param(cst.Name(p)) for p in params]),
        body=cst.IndentedBlock(body=[loop.with_changes(leading_lines=())]),
        leading_lines=loop.leading_lines,
    )
    call = cst.parse_statement(f"train({signature})\n")
    body = [*module.body[:index], function, call, *module.body[index + 1:]]
    return {"train.py": module.with_changes(body=body).code}


def _assigned_in(statement: cst.CSTNode, names: list[str]) -> bool:
    return bool(_assigned_at_top(cst.Module(body=[statement])) & set(names))  # type: ignore[list-item]


REWRITES: dict[str, Callable[[str], Files | None]] = {
    "definitions-in-another-module": definitions_to_module,
    "for-as-while": for_to_while,
    "backward-under-a-condition": backward_in_condition,
    "loop-in-a-function": loop_into_function,
}
