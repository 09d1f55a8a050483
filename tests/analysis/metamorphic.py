"""Mechanical rewrites of training scripts that keep what the program does, for metamorphic tests:
the analysis must give a rewritten fixture exactly the findings of the original
(`test_metamorphic.py`), and its fix must train like the hand-written fix rewritten alike
(`test_fix_variants.py`, through `variant_pair`).

Each rewrite takes a script's text and returns the files of the rewritten program (the script
first), or None when the script has no place the rewrite applies to.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst
from metamorphic_syntax import (
    Files,
    Rename,
    all_blocks,
    assigned_at_top,
    blocks,
    bound_anywhere,
    bound_by_other_statements,
    bound_in_nested_scopes,
    calls_backward,
    contains,
    fresh,
    is_import,
    marked_rows,
    names_read,
    statement_rows,
    training_loops,
)


def movable_definitions(source: str) -> list[str]:
    """The top-level classes and functions `definitions_to_module` moves: those without a marked line
    (their findings stay in the script) that read none of the script's own globals."""
    module = cst.parse_module(source)
    rows = statement_rows(module)
    marked = marked_rows(source)
    top_names = assigned_at_top(module)
    definitions = {s.name.value: s for s in module.body if isinstance(s, (cst.ClassDef, cst.FunctionDef))}
    names = []
    for name, statement in definitions.items():
        start, end = rows[statement]
        if any(start <= row <= end for row in marked) or "<freed-by>" in module.code_for_node(statement):
            continue
        if names_read(statement) & top_names:
            continue  # it reads the script's own globals: it cannot live elsewhere unchanged
        names.append(name)
    while True:  # a moved definition that uses one kept in the script cannot move either
        kept = set(definitions) - set(names)
        staying = [n for n in names if names_read(definitions[n]) & kept]
        if not staying:
            return names
        names = [n for n in names if n not in staying]


def definitions_to_module(source: str, names: list[str] | None = None) -> Files | None:
    """The model classes and helpers moved into `lib.py`, imported by name from the script (those of
    `movable_definitions`, or the given names: a program's fixed twin moves what the program moved)."""
    module = cst.parse_module(source)
    wanted = set(movable_definitions(source) if names is None else names)
    moved = [s for s in module.body if isinstance(s, (cst.ClassDef, cst.FunctionDef)) and s.name.value in wanted]
    if not moved:
        return None
    imports = [s for s in module.body if is_import(s)]
    imported = ", ".join(s.name.value for s in moved)  # type: ignore[attr-defined]
    lib = module.with_changes(body=[*imports, *moved])
    last_import = max((module.body.index(s) for s in imports), default=-1)
    kept = [s for s in module.body if s not in moved]
    line = cst.parse_statement(f"from lib import {imported}\n")
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
    def __init__(self, test: str) -> None:
        self.count = 0
        self.test = test

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine,
                                  updated: cst.SimpleStatementLine) -> cst.BaseStatement:
        if len(updated.body) != 1 or not isinstance(updated.body[0], cst.Expr) or not calls_backward(updated):
            return updated
        self.count += 1
        return cst.If(test=cst.parse_expression(self.test),
                      body=cst.IndentedBlock(body=[updated.with_changes(leading_lines=())]),
                      leading_lines=updated.leading_lines)


def _guard_backwards(source: str, test: str, definition: str, name: str) -> Files | None:
    """Each backward statement under `if <test>:`, with `definition` (of `name`) placed after the imports."""
    module = cst.parse_module(source)
    transformer = _GuardBackward(test)
    rewritten = module.visit(transformer)
    if not transformer.count or name in names_read(module):
        return None
    imports = [i for i, s in enumerate(rewritten.body) if is_import(s)]
    at = imports[-1] + 1 if imports else 0
    body = [*rewritten.body[:at], cst.parse_statement(definition), *rewritten.body[at:]]
    return {"train.py": rewritten.with_changes(body=body).code}


def backward_in_condition(source: str) -> Files | None:
    """Each backward statement under `if LOG_BACKWARD:` (a flag set once at the top)."""
    return _guard_backwards(source, "LOG_BACKWARD", "LOG_BACKWARD = True\n", "LOG_BACKWARD")


def backward_under_a_call(source: str) -> Files | None:
    """Each backward statement under `if should_backward():`, a function of the script that returns
    True: a test no condition atom names (it calls), so the analysis takes it both ways, in a loop of
    the script or in a method the loop calls."""
    return _guard_backwards(source, "should_backward()", "def should_backward() -> bool:\n    return True\n",
                            "should_backward")


class _CallsUnderFlags(cst.CSTTransformer):
    """Inside loops that backward, each assignment of a call's result (not a marked line) becomes
    `if FLAG_k: <it> else: <it>`, one flag per statement, both arms the same."""

    def __init__(self, marked: set[int], rows: dict[cst.CSTNode, tuple[int, int]]) -> None:
        self.marked, self.rows = marked, rows
        self.loops = 0
        self.flags = 0

    def visit_For(self, node: cst.For) -> None:
        self.loops += calls_backward(node)

    def visit_While(self, node: cst.While) -> None:
        self.loops += calls_backward(node)

    def leave_For(self, original: cst.For, updated: cst.For) -> cst.For:
        self.loops -= calls_backward(original)
        return updated

    def leave_While(self, original: cst.While, updated: cst.While) -> cst.While:
        self.loops -= calls_backward(original)
        return updated

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine,
                                  updated: cst.SimpleStatementLine) -> cst.BaseStatement:
        if not self.loops or len(updated.body) != 1 or not isinstance(updated.body[0], cst.Assign) \
                or not isinstance(updated.body[0].value, cst.Call) or calls_backward(updated):
            return updated
        first, last = self.rows.get(original, (0, 0))
        if any(row in self.marked for row in range(first, last + 1)):
            return updated
        self.flags += 1
        arm = updated.with_changes(leading_lines=())
        return cst.If(test=cst.Name(f"FLAG_{self.flags}"), body=cst.IndentedBlock(body=[arm]),
                      orelse=cst.Else(body=cst.IndentedBlock(body=[arm])), leading_lines=updated.leading_lines)


def calls_under_flags(source: str) -> Files | None:
    """Each call assigned in a training loop run under a command-line flag, the same code on both
    arms (`if FLAG_1: out = model(x) else: out = model(x)`): more loop-invariant conditions than the
    analysis keeps paths apart, as configurable research code has."""
    module = cst.parse_module(source)
    transformer = _CallsUnderFlags(marked_rows(source), statement_rows(module))
    rewritten = module.visit(transformer)
    if not transformer.flags:
        return None
    imports = [i for i, s in enumerate(rewritten.body) if is_import(s)]
    at = imports[-1] + 1 if imports else 0
    flags = [cst.parse_statement("import sys\n"),
             *(cst.parse_statement(f'FLAG_{k} = "--variant-{k}" in sys.argv\n')
               for k in range(1, transformer.flags + 1))]
    body = [*rewritten.body[:at], *flags, *rewritten.body[at:]]
    return {"train.py": rewritten.with_changes(body=body).code}


def loop_into_function(source: str) -> Files | None:
    """The last top-level training loop moved into `def train(<what it uses>)`, called at once; what
    the loop binds and later code reads is returned to it."""
    module = cst.parse_module(source)
    loops = training_loops(list(module.body))
    if not loops:
        return None
    loop = loops[-1]
    index = module.body.index(loop)
    before = cst.Module(body=list(module.body[:index]))
    params = sorted(names_read(loop) & assigned_at_top(before))
    if any(_assigned_in(s, params) for s in module.body[index + 1:]):
        return None
    name = fresh("train", module)
    results = _read_later(loop, module.body[index + 1:])
    function = cst.FunctionDef(
        name=cst.Name(name),
        params=cst.Parameters(params=[cst.Param(cst.Name(p)) for p in params]),
        body=cst.IndentedBlock(body=[loop.with_changes(leading_lines=()), *_returning(results)]),
        leading_lines=loop.leading_lines,
    )
    call = cst.parse_statement(_receiving(results) + f"{name}({', '.join(params)})\n")
    body = [*module.body[:index], function, call, *module.body[index + 1:]]
    return {"train.py": module.with_changes(body=body).code}


def _read_later(loop: cst.CSTNode, later: list[cst.BaseStatement] | tuple[cst.BaseStatement, ...]) -> list[str]:
    """What `loop` binds that the statements after it read."""
    return sorted(bound_anywhere(loop) & names_read(cst.Module(body=list(later))))


def _returning(names: list[str]) -> list[cst.BaseStatement]:
    return [cst.parse_statement(f"return {', '.join(names)},\n")] if names else []


def _receiving(names: list[str]) -> str:
    return f"{', '.join(names)}, = " if names else ""


def _assigned_in(statement: cst.CSTNode, names: list[str]) -> bool:
    return bool(assigned_at_top(cst.Module(body=[statement])) & set(names))  # type: ignore[list-item]


def loop_in_a_trainer(source: str) -> Files | None:
    """A `Trainer` class whose `__init__` keeps what training uses as attributes (`self.model`,
    `self.opt`; state that training rebinds lives on the object) and whose `fit` method trains: the
    last top-level training loop, or else the last top-level function holding one (its calls become
    `Trainer(...).fit()`)."""
    module = cst.parse_module(source)
    loops = training_loops(list(module.body))
    if loops:
        loop = loops[-1]
        index = module.body.index(loop)
        before = cst.Module(body=list(module.body[:index]))
        params = sorted(names_read(loop) & assigned_at_top(before) - bound_in_nested_scopes(loop))
        if not params or any(_assigned_in(s, params) for s in module.body[index + 1:]):
            return None
        results = _read_later(loop, module.body[index + 1:])
        trainer = _trainer(params, "", [loop.with_changes(leading_lines=()), *_returning(results)],
                           loop.leading_lines)
        call = cst.parse_statement(_receiving(results) + f"Trainer({', '.join(params)}).fit()\n")
        return {"train.py": module.with_changes(body=[*module.body[:index], trainer, call,
                                                      *module.body[index + 1:]]).code}
    functions = [s for s in module.body if isinstance(s, cst.FunctionDef) and training_loops(all_blocks(s))
                 and not s.decorators and not isinstance(s.params.star_arg, cst.Param) and s.params.star_kwarg is None
                 and not s.params.kwonly_params and not s.params.posonly_params]
    if not functions or "Trainer" in names_read(module):
        return None
    function = functions[-1]
    name = function.name.value
    params = [p.name.value for p in function.params.params]
    if not params or set(params) & bound_in_nested_scopes(function.body):
        return None
    signature = cst.Module(body=[]).code_for_node(function.params)
    trainer = _trainer(params, signature, list(function.body.body), function.leading_lines)  # type: ignore[attr-defined]
    uses = _CallsOf(name)
    rewritten = module.with_changes(body=[trainer if s is function else s for s in module.body]).visit(uses)
    return {"train.py": rewritten.code} if uses.calls and not uses.other_uses else None


def _trainer(params: list[str], signature: str, body: list[cst.BaseStatement],
             leading_lines: object) -> cst.ClassDef:
    rename = Rename({p: f"self.{p}" for p in params})
    init = "".join(f"        self.{p} = {p}\n" for p in params)
    trainer = cst.parse_statement(f"class Trainer:\n    def __init__(self, {signature or ', '.join(params)}):\n"
                                  f"{init}\n    def fit(self):\n        pass\n")
    assert isinstance(trainer, cst.ClassDef)
    init_method, fit = trainer.body.body
    assert isinstance(fit, cst.FunctionDef)
    fit = fit.with_changes(body=fit.body.with_changes(body=[s.visit(rename) for s in body]))
    return trainer.with_changes(body=trainer.body.with_changes(body=[init_method, fit]),
                                leading_lines=leading_lines)


class _CallsOf(cst.CSTTransformer):
    """`name(args)` -> `Trainer(args).fit()`; counts the calls and any other use of `name`."""

    def __init__(self, name: str) -> None:
        self.name, self.calls, self.other_uses = name, 0, 0

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if isinstance(original.func, cst.Name) and original.func.value == self.name:
            self.calls += 1
            made = updated.with_changes(func=cst.Name("Trainer"))
            return cst.Call(func=cst.Attribute(value=made, attr=cst.Name("fit")))
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if original.value == self.name:
            self.other_uses += 1
        return updated

    def visit_Call(self, node: cst.Call) -> bool:
        if isinstance(node.func, cst.Name) and node.func.value == self.name:
            for arg in node.args:
                arg.visit(self)
            return False
        return True


def _carried(block: list[cst.BaseStatement], loop: cst.BaseStatement) -> list[str]:
    """Variables a training loop carries from one iteration to the next: bound before it in its
    block, bound again by a plain assignment in its body, and read there."""
    index = block.index(loop)
    before = assigned_at_top(cst.Module(body=list(block[:index])))
    inside = assigned_at_top(cst.Module(body=list(loop.body.body)))  # type: ignore[attr-defined]
    excluded = bound_in_nested_scopes(loop) | bound_by_other_statements(loop)
    if isinstance(loop, cst.For):
        excluded |= names_read(loop.target)
    return sorted((before & inside & names_read(loop.body)) - excluded)


class _TupleStores(cst.CSTTransformer):
    """Inside a loop, statements binding carried variables bind temporaries instead, then rebuild the
    state tuple from them (`out, _new_h = f(x, state[0])` + `state = (_new_h, state[1])`)."""

    def __init__(self, names: list[str], state: str) -> None:
        self.names, self.state = names, state
        self.reads = Rename({n: f"{state}[{i}]" for i, n in enumerate(names)})

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine,
                                  updated: cst.SimpleStatementLine) -> cst.BaseStatement | cst.FlattenSentinel:
        stored = set().union(*(assigned_at_top(cst.Module(body=[cst.SimpleStatementLine(body=[s])]))
                               for s in updated.body)) & set(self.names)
        if not stored:
            return updated.visit(self.reads)  # type: ignore[return-value]
        temporaries = {n: f"_new_{n}" for n in stored}
        lines: list[cst.BaseStatement] = []
        for small in updated.body:
            if isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name) and small.target.value in stored:
                name = small.target.value
                lines.append(cst.parse_statement(f"{temporaries[name]} = {self.state}[{self.names.index(name)}]\n"))
                small = small.with_changes(target=cst.Name(temporaries[name]), value=small.value.visit(self.reads))
            elif isinstance(small, (cst.Assign, cst.AnnAssign)):
                value = small.value.visit(self.reads) if small.value is not None else None
                small = Rename(temporaries).in_targets(small).with_changes(value=value)
            else:
                small = small.visit(self.reads)
            lines.append(updated.with_changes(body=[small], leading_lines=()))
        items = ", ".join(temporaries.get(n, f"{self.state}[{i}]") for i, n in enumerate(self.names))
        lines.append(cst.parse_statement(f"{self.state} = ({items},)\n"))
        lines[0] = lines[0].with_changes(leading_lines=updated.leading_lines)
        return cst.FlattenSentinel(lines)


def _state_rewrite(source: str, shape: str) -> Files | None:
    module = cst.parse_module(source)
    replaced: dict[cst.CSTNode, cst.CSTNode | cst.FlattenSentinel] = {}
    count = 0
    for block in blocks(module):
        for loop in training_loops(block):
            names = _carried(block, loop)
            if not names or any(contains(chosen, loop) for chosen in replaced):
                continue
            count += 1
            state = f"_state{count}"
            if shape == "dict":
                pack = "{" + ", ".join(f"{n!r}: {n}" for n in names) + "}"
                body = loop.visit(Rename({n: f"{state}[{n!r}]" for n in names}))
                unpack = f"{', '.join(names)}, = " + ", ".join(f"{state}[{n!r}]" for n in names) + ",\n"
            else:
                pack = "(" + ", ".join(names) + ",)"
                body = loop.with_changes(body=loop.body.visit(_TupleStores(names, state)))  # type: ignore[attr-defined]
                if isinstance(loop, cst.While):
                    body = body.with_changes(test=loop.test.visit(Rename({n: f"{state}[{i}]" for i, n in enumerate(names)})))
                unpack = f"{', '.join(names)}, = {state}\n"
            first = cst.parse_statement(f"{state} = {pack}\n").with_changes(leading_lines=loop.leading_lines)
            replaced[loop] = cst.FlattenSentinel([first, body.with_changes(leading_lines=()),
                                                  cst.parse_statement(unpack)])
    if not replaced:
        return None

    class Swap(cst.CSTTransformer):
        def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):  # type: ignore[override]
            return replaced.get(original, updated)

    return {"train.py": module.visit(Swap()).code}


def state_in_a_dict(source: str) -> Files | None:
    """What a training loop carries across iterations (hidden states, accumulators) kept in one dict,
    packed before the loop and unpacked after it (`state["hidden"]`)."""
    return _state_rewrite(source, "dict")


def state_in_a_tuple(source: str) -> Files | None:
    """What a training loop carries across iterations kept in one tuple, rebuilt whenever an item
    changes (`out, _new_h = f(x, state[0])` then `state = (_new_h, state[1])`)."""
    return _state_rewrite(source, "tuple")


REWRITES: dict[str, Callable[[str], Files | None]] = {
    "definitions-in-another-module": definitions_to_module,
    "for-as-while": for_to_while,
    "backward-under-a-condition": backward_in_condition,
    "backward-under-a-call": backward_under_a_call,
    "calls-under-flags": calls_under_flags,
    "loop-in-a-function": loop_into_function,
    "loop-in-a-trainer": loop_in_a_trainer,
    "state-in-a-dict": state_in_a_dict,
    "state-in-a-tuple": state_in_a_tuple,
}


def variant_pair(rewrite: str, buggy: str, fixed: str) -> tuple[Files, Files] | None:
    """One rewrite applied alike to a buggy program and to its hand-written fix (the fix moves what
    the program moved), or None when it does not apply to both."""
    if rewrite == "definitions-in-another-module":
        names = movable_definitions(buggy)
        pair = definitions_to_module(buggy, names), definitions_to_module(fixed, names)
    else:
        pair = REWRITES[rewrite](buggy), REWRITES[rewrite](fixed)
    return None if pair[0] is None or pair[1] is None else (pair[0], pair[1])
