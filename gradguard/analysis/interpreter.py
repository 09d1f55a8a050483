"""The abstract interpreter: runs a file's statements over abstract values to find freed graphs.

It follows statements in order, both arms of every branch, loops to a fixed point (so the second
iteration sees what the first left behind), calls of functions, methods and classes of the same file
by inlining them with the argument values, closures called by optimizers, and object attributes
(`self.h`) in a heap keyed by class. Expressions are evaluated in `expressions.py`.
"""

from __future__ import annotations

import time

import libcst as cst

from gradguard.analysis.expressions import BudgetExceeded, Evaluator
from gradguard.analysis.names import canonical, import_bindings, qualify
from gradguard.analysis.state import ClassInfo, Frame, FunctionInfo, State
from gradguard.analysis.values import DATA, NONE, UNKNOWN, Kind, Value, cut, join

MAX_LOOP_PASSES = 4


class Interpreter(Evaluator):
    """Statement execution on top of the expression evaluator."""

    # -- blocks and statements -------------------------------------------------------------

    def exec_block(self, body: cst.BaseSuite | list[cst.BaseStatement] | tuple, state: State,
                   frame: Frame, owner: cst.CSTNode) -> None:
        """Run a block of statements in place on `state`."""
        statements = body.body if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)) else body
        for statement in statements:
            if state.dead:
                return
            frame.statements.append((owner, statement))
            try:
                self.exec_statement(statement, state, frame)
            finally:
                frame.statements.pop()

    def exec_statement(self, statement: cst.CSTNode, state: State, frame: Frame) -> None:
        """Run one statement in place on `state`."""
        self.tick()
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if state.dead:
                    return
                self.exec_small(small, statement, state, frame)
        elif isinstance(statement, cst.If):
            self.exec_if(statement, state, frame)
        elif isinstance(statement, cst.For):
            self.exec_for(statement, state, frame)
        elif isinstance(statement, cst.While):
            self.exec_while(statement, state, frame)
        elif isinstance(statement, cst.With):
            self.exec_with(statement, state, frame)
        elif isinstance(statement, cst.Try):
            self.exec_try(statement, state, frame)
        elif isinstance(statement, cst.FunctionDef):
            self.define_function(statement, state, frame)
        elif isinstance(statement, cst.ClassDef):
            info = self.classes.get(statement)
            if info is not None:
                self.store_name(statement.name.value, Value(Kind.CLASS, ref=info), state, frame, statement)
        elif isinstance(statement, cst.Match):
            self.exec_match(statement, state, frame)
        elif hasattr(statement, "body"):
            self.exec_block(statement.body, state, frame, statement)  # type: ignore[attr-defined]

    def exec_small(self, small: cst.BaseSmallStatement, line: cst.SimpleStatementLine, state: State,
                   frame: Frame) -> None:
        """Run one small statement of a simple statement line."""
        if isinstance(small, cst.Expr):
            self.eval(small.value, state, frame)
        elif isinstance(small, cst.Assign):
            value = self.eval(small.value, state, frame)
            for target in small.targets:
                self.assign(target.target, value, state, frame, line, small.value)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                value = self.eval(small.value, state, frame)
                self.assign(small.target, value, state, frame, line, small.value)
        elif isinstance(small, cst.AugAssign):
            self.exec_augassign(small, line, state, frame)
        elif isinstance(small, cst.Return):
            value = self.eval(small.value, state, frame) if small.value is not None else NONE
            frame.return_values.append(value)
            frame.returns.append(state.copy())
            state.dead = True
        elif isinstance(small, cst.Raise):
            if small.exc is not None:
                self.eval(small.exc, state, frame)
            state.dead = True
        elif isinstance(small, cst.Break):
            if frame.breaks:
                frame.breaks[-1].append(state.copy())
            state.dead = True
        elif isinstance(small, cst.Continue):
            if frame.continues:
                frame.continues[-1].append(state.copy())
            state.dead = True
        elif isinstance(small, (cst.Import, cst.ImportFrom)):
            frame.imports.update(import_bindings(small))
            for local in import_bindings(small):
                self.forget(local, state, frame)
        elif isinstance(small, cst.Global):
            frame.global_names.update(n.name.value for n in small.names)
        elif isinstance(small, cst.Nonlocal):
            frame.global_names.update(n.name.value for n in small.names)
        elif isinstance(small, cst.Del):
            self.exec_del(small.target, state, frame, line)
        elif isinstance(small, cst.Assert):
            self.eval(small.test, state, frame)

    def exec_augassign(self, small: cst.AugAssign, line: cst.SimpleStatementLine, state: State,
                       frame: Frame) -> None:
        right = self.eval(small.value, state, frame)
        left = self.eval(small.target, state, frame)
        if left.kind in (Kind.LIST, Kind.DICT) or (left.elems is not None and left.kind is Kind.TUPLE):
            combined = self.container_add(left, right)
        else:
            operands = [(small.target, left), (small.value, right)]
            combined = self.derive(small, operands, state, frame)
        self.assign(small.target, combined, state, frame, line, small)
        self.note_accumulation(small.target, right, small.value, line, state, frame, container=False)

    def exec_del(self, target: cst.BaseExpression, state: State, frame: Frame, line: cst.CSTNode) -> None:
        if isinstance(target, cst.Tuple):
            for element in target.elements:
                self.exec_del(element.value, state, frame, line)
        elif isinstance(target, cst.Subscript):
            holder_value = self.eval(target.value, state, frame)
            if holder_value.kind in (Kind.LIST, Kind.DICT, Kind.UNKNOWN):
                self.store_in_place(target.value, Value(holder_value.kind), state, frame, line)
        elif isinstance(target, cst.Name):
            self.forget(target.value, state, frame)

    def exec_if(self, statement: cst.If, state: State, frame: Frame) -> None:
        self.eval(statement.test, state, frame)
        branch = state.copy()
        other = state.copy()
        self.refine_none(statement.test, branch, other, frame)
        self.exec_block(statement.body, branch, frame, statement)
        if isinstance(statement.orelse, cst.If):
            self.exec_statement(statement.orelse, other, frame)
        elif isinstance(statement.orelse, cst.Else):
            self.exec_block(statement.orelse.body, other, frame, statement.orelse)
        self.merge_into(state, [branch, other])

    def refine_none(self, test: cst.BaseExpression, then: State, otherwise: State, frame: Frame) -> None:
        """`if x is None:` / `if x is not None:`: in the branch where `x` is None, it holds no graph."""
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
            return
        comparison = test.comparisons[0]
        if not (isinstance(comparison.comparator, cst.Name) and comparison.comparator.value == "None"):
            return
        if isinstance(comparison.operator, cst.Is):
            none_state = then
        elif isinstance(comparison.operator, cst.IsNot):
            none_state = otherwise
        else:
            return
        holder = self.holder_of(test.left, none_state, frame)
        if holder is not None:
            self.rebind(holder, NONE, none_state, frame)

    def exec_match(self, statement: cst.Match, state: State, frame: Frame) -> None:
        self.eval(statement.subject, state, frame)
        outcomes = [state.copy()]
        for case in statement.cases:
            branch = state.copy()
            self.exec_block(case.body, branch, frame, case)
            outcomes.append(branch)
        self.merge_into(state, outcomes)

    def merge_into(self, state: State, outcomes: list[State]) -> None:
        """Replace `state` by the join of `outcomes` (dead when none is reachable)."""
        joined = State.join_all(outcomes)
        if joined is None:
            state.dead = True
            return
        self.adopt(state, joined)

    @staticmethod
    def adopt(state: State, other: State) -> None:
        """Make `state` (an object others hold) equal to `other`."""
        for slot in State.__slots__:
            setattr(state, slot, getattr(other, slot))

    def exec_for(self, statement: cst.For, state: State, frame: Frame) -> None:
        iterable = self.eval(statement.iter, state, frame)
        element = self.element_from(statement.iter, iterable, state, frame)

        def bind(s: State) -> None:
            self.assign(statement.target, element, s, frame, statement, statement.iter)

        self.run_loop(statement, statement.body, bind, None, state, frame)

    def exec_while(self, statement: cst.While, state: State, frame: Frame) -> None:
        def test(s: State) -> None:
            self.eval(statement.test, s, frame)

        self.run_loop(statement, statement.body, test, None, state, frame)

    def run_loop(self, loop: cst.For | cst.While, body: cst.BaseSuite, enter, _unused,
                 state: State, frame: Frame) -> None:
        """Run a loop body to a fixed point; `state` becomes the state after the loop.

        The first iteration starts from the state before the loop; later iterations start from
        what earlier iterations left behind, never from the state before the loop, so a value the
        first iteration always replaces is not mistaken for one a later iteration still holds.
        """
        entry = state.copy()
        head = entry
        later: State | None = None
        exits: list[State] = []
        frame.loops.append(loop)
        try:
            for _ in range(MAX_LOOP_PASSES):
                current = head.copy()
                enter(current)
                frame.breaks.append([])
                frame.continues.append([])
                try:
                    self.exec_block(body, current, frame, loop)
                finally:
                    broken = frame.breaks.pop()
                    continued = frame.continues.pop()
                exits.extend(broken)
                back = State.join_all([current, *continued])
                if back is None:
                    break
                if later is None:
                    later = back
                else:
                    merged = State.join_all([later, back])
                    assert merged is not None
                    if merged.same_as(later):
                        break
                    later = merged
                head = later
        finally:
            frame.loops.pop()
        # Loops are taken to run at least once: joining "no iteration at all" with what the
        # iterations did would pair values from one path with frees from the other.
        after = later.copy() if later is not None else entry.copy()
        if later is None and exits:
            after.dead = True
        orelse = getattr(loop, "orelse", None)
        if orelse is not None:
            self.exec_block(orelse.body, after, frame, orelse)
        self.merge_into(state, [after, *exits])

    def exec_with(self, statement: cst.With, state: State, frame: Frame) -> None:
        previous = state.no_grad
        for item in statement.items:
            manager = item.item
            effect = self.grad_mode_of(manager, state, frame)
            if effect is None:
                value = self.eval(manager, state, frame)
            else:
                value = UNKNOWN
                state.no_grad = effect
            if item.asname is not None:
                self.assign(item.asname.name, value, state, frame, statement, manager)
        self.exec_block(statement.body, state, frame, statement)
        if not state.dead:
            state.no_grad = previous

    def grad_mode_of(self, manager: cst.BaseExpression, state: State, frame: Frame) -> bool | None:
        """True for `torch.no_grad()`, False for `torch.enable_grad()`, None for other managers."""
        from gradguard.analysis.knowledge import ENABLE_GRAD, NO_GRAD, SET_GRAD_ENABLED

        func = manager.func if isinstance(manager, cst.Call) else manager
        name = self.qualified(func, state, frame)
        if name in NO_GRAD:
            return True
        if name in ENABLE_GRAD:
            return False
        if name in SET_GRAD_ENABLED and isinstance(manager, cst.Call) and manager.args:
            flag = manager.args[0].value
            if isinstance(flag, cst.Name) and flag.value in ("True", "False"):
                return flag.value == "False"
            return state.no_grad
        return None

    def exec_try(self, statement: cst.Try, state: State, frame: Frame) -> None:
        before = state.copy()
        self.exec_block(statement.body, state, frame, statement)
        outcomes = [state.copy()]
        for handler in statement.handlers:
            branch = State.join_all([before, state]) or before.copy()
            if handler.name is not None:
                self.assign(handler.name.name, UNKNOWN, branch, frame, handler, None)
            self.exec_block(handler.body, branch, frame, handler)
            outcomes.append(branch)
        if statement.orelse is not None:
            self.exec_block(statement.orelse.body, outcomes[0], frame, statement.orelse)
        self.merge_into(state, outcomes)
        if statement.finalbody is not None and not state.dead:
            self.exec_block(statement.finalbody.body, state, frame, statement.finalbody)

    # -- definitions ---------------------------------------------------------------------

    def define_function(self, node: cst.FunctionDef, state: State, frame: Frame) -> None:
        info = self.functions.get(node)
        if info is None:
            outer = frame.function.qualname if frame.function else ""
            info = FunctionInfo(node, f"{outer}.{node.name.value}" if outer else node.name.value,
                                nested=frame.function is not None,
                                no_grad=self.decorated_no_grad(node, frame))
            self.functions[node] = info
        self.store_name(node.name.value, Value(Kind.FUNCTION, ref=info), state, frame, node)

    def decorated_no_grad(self, node: cst.FunctionDef, frame: Frame | None) -> bool:
        from gradguard.analysis.knowledge import NO_GRAD

        imports = frame.imports if frame is not None else self.imports
        for decorator in node.decorators:
            expr = decorator.decorator
            func = expr.func if isinstance(expr, cst.Call) else expr
            name = qualify(func, imports)
            if name is not None and canonical(name) in NO_GRAD:
                return True
        return False

    # -- calls of functions of this file ------------------------------------------------

    def call_function(self, info: FunctionInfo, args: list[tuple[cst.BaseExpression | None, Value]],
                      kwargs: dict[str, Value], state: State, frame: Frame,
                      self_value: Value | None, call: cst.CSTNode) -> Value:
        """Inline a call: run the function's body with the argument values bound to its parameters."""
        if frame.depth >= self.max_depth or any(info is f for f in self.active):
            return UNKNOWN
        node = info.node
        callee = Frame(info, self_value, list(frame.loops), frame.depth + 1, imports=dict(self.imports))
        locals_: dict[str, Value] = {}
        params = node.params
        positional = [*params.posonly_params, *params.params]
        values = [v for _, v in args]
        if self_value is not None and positional:
            locals_[positional[0].name.value] = self_value
            positional = positional[1:]
        for index, param in enumerate(positional):
            name = param.name.value
            if index < len(values):
                locals_[name] = values[index]
            elif name in kwargs:
                locals_[name] = kwargs[name]
            elif param.default is not None:
                locals_[name] = self.eval(param.default, state, frame)
            else:
                locals_[name] = UNKNOWN
        if isinstance(params.star_arg, cst.Param):
            extra = values[len(positional):]
            locals_[params.star_arg.name.value] = self.container_of(Kind.TUPLE, extra)
        for param in params.kwonly_params:
            name = param.name.value
            locals_[name] = kwargs.get(name, self.eval(param.default, state, frame) if param.default else UNKNOWN)
        if params.star_kwarg is not None:
            locals_[params.star_kwarg.name.value] = self.container_of(Kind.DICT, list(kwargs.values()))
        bound = [p.name.value for p in positional]
        callee.param_reads = self.argument_reads(bound, args, state, frame, call)  # type: ignore[assignment]
        state.frames.append(locals_)
        state.defs.append({name: frozenset({node}) for name in locals_})
        previous_no_grad = state.no_grad
        if info.no_grad:
            state.no_grad = True
        self.active.append(info)
        try:
            if isinstance(node, cst.Lambda):
                result = self.eval(node.body, state, callee)
                callee.return_values.append(result)
                callee.returns.append(state.copy())
            else:
                self.exec_block(node.body, state, callee, node)
                if not state.dead:
                    callee.return_values.append(NONE)
                    callee.returns.append(state.copy())
        finally:
            self.active.pop()
        final = State.join_all(callee.returns)
        if final is None:
            final = state.copy()
            final.dead = False
        final.frames.pop()
        final.defs.pop()
        final.no_grad = previous_no_grad
        self.adopt(state, final)
        result: Value | None = None
        for value in callee.return_values:
            result = join(result, value)
        return result if result is not None else NONE

    def instantiate(self, info: ClassInfo, args: list[tuple[cst.BaseExpression | None, Value]],
                    kwargs: dict[str, Value], state: State, frame: Frame, call: cst.CSTNode,
                    label: str | None) -> Value:
        """`Cls(...)`: a new abstract instance, with `__init__` run on it."""
        instance = Value(Kind.INSTANCE, ref=info, label=label)
        init = self.method_of(info, "__init__")
        if init is not None:
            self.call_function(init, args, kwargs, state, frame, instance, call)
        return instance

    def method_of(self, info: ClassInfo, name: str) -> FunctionInfo | None:
        """A method of a class of this file, looked up through its in-file base classes."""
        seen: set[str] = set()
        pending = [info]
        while pending:
            current = pending.pop(0)
            if current.name in seen:
                continue
            seen.add(current.name)
            method = current.methods.get(name)
            if method is not None:
                return method
            pending.extend(c for c in self.classes.values() if c.name in current.bases)
        return None

    def element_of(self, iterable: Value) -> Value:
        """The value of one element when iterating over `iterable`."""
        if iterable.kind is Kind.DATA:
            return DATA
        if iterable.label is not None and iterable.label.startswith("params:"):
            return Value(Kind.TENSOR, grad=True, label=iterable.label)
        if isinstance(iterable.ref, Value) and iterable.ref.kind is Kind.INSTANCE:
            return iterable.ref
        if iterable.elems is not None and iterable.elems:
            result: Value | None = None
            for element in iterable.elems:
                result = join(result, element)
            return result or UNKNOWN
        if iterable.nodes:
            return Value(Kind.UNKNOWN, iterable.nodes, iterable.top, iterable.grad,
                         element=iterable.kind in (Kind.LIST, Kind.TUPLE, Kind.DICT))
        if iterable.kind in (Kind.LIST, Kind.TUPLE, Kind.DICT):
            return UNKNOWN
        return cut(iterable) if iterable.kind is Kind.TENSOR else UNKNOWN

    def tick(self) -> None:
        """Count work; give up on an entry point that would take too long."""
        self.steps += 1
        self.file_steps += 1
        if self.steps > self.max_steps or self.file_steps > self.max_file_steps:
            raise BudgetExceeded
        if self.steps % 512 == 0 and time.monotonic() > self.deadline:
            raise BudgetExceeded
