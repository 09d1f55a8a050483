"""Expression evaluation of the abstract interpreter: names, attributes, operators and calls.

Every operation on values that may require grad makes a new graph node (see `values.py`) and records
where its inputs came from (`Origin`), so a conflict can later name the variable that carried a stale
graph. Calls are dispatched by what the callee is: a backward or grad, a torch function known by its
qualified name, a function or class of this file (inlined), a module (a graph source), or anything else.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import libcst as cst

from gradguard.analysis import knowledge as K
from gradguard.analysis.names import canonical, dotted, qualify
from gradguard.analysis.state import ClassInfo, Frame, FunctionInfo, State
from gradguard.analysis.values import (
    DATA,
    FRESH,
    NONE,
    SCALAR,
    UNKNOWN,
    CallInfo,
    Freed,
    Holder,
    Kind,
    Origin,
    Read,
    Value,
    cut,
    GENERATIONS,
    generation_of,
    join,
    node_id,
    old,
    rename,
    stamps_of,
    translate,
)


@dataclass(frozen=True)
class Boundary:
    """A read of a holder whose value was already stale when it fed the failing graph."""

    read: Read
    loops: tuple[cst.CSTNode, ...]  # the loops around the creation of the stale value
    old: bool  # the stale value was made by an earlier evaluation of its expression


@dataclass(frozen=True)
class Met:
    """A backward that reached freed nodes, with what was known at that moment."""

    failing: CallInfo
    freed_by: CallInfo
    value: Value
    stale: frozenset[int]
    why: Freed
    boundary: tuple[Boundary, ...]
    created_loops: tuple[cst.CSTNode, ...]


class BudgetExceeded(Exception):
    """An entry point took more steps than the analysis allows itself."""


Args = list[tuple[cst.BaseExpression | None, Value]]


class Evaluator:
    """Expression evaluation; the statement part lives in `interpreter.Interpreter`."""

    max_depth = 6
    max_steps = 60_000
    # Wall-clock seconds the analysis of one file may take before it reports what it found so far.
    time_budget = 10.0

    def __init__(self, imports: dict[str, str], modules: frozenset[str]) -> None:
        self.imports = imports
        self.module_names = modules
        self.functions: dict[cst.CSTNode, FunctionInfo] = {}
        self.classes: dict[cst.CSTNode, ClassInfo] = {}
        self.sites: dict[cst.CSTNode, int] = {}
        self.created: set[int] = set()
        self.origins: dict[int, Origin] = {}
        self.active: list[FunctionInfo] = []
        self.steps = 0
        self.deadline = float("inf")
        # Findings, recorded as they are met; `detect.py` turns them into facts.
        self.conflicts: dict[tuple[int, int], Met] = {}
        self.call_reads: dict[CallInfo, tuple[Read, ...]] = {}
        self.call_roots: dict[CallInfo, frozenset[int]] = {}
        self.call_infos: dict[tuple[int, tuple[int, ...]], CallInfo] = {}
        self.retains: dict[CallInfo, tuple[frozenset[int], dict[int, int]]] = {}
        self.retains_needed: set[CallInfo] = set()
        self.escaped: set[int] = set()
        self.accumulations: dict[cst.CSTNode, tuple[Holder, cst.CSTNode, cst.CSTNode, bool, cst.CSTNode, frozenset[int]]] = {}
        self.backwarded: set[int] = set()
        self.backward_holders: set[tuple[str, ...]] = set()
        self.appended_holders: set[tuple[str, ...]] = set()
        self.reset_holders: set[tuple[str, ...]] = set()
        self.frozen: set[str] = set()
        self.none_assigned: set[tuple[str, ...]] = set()
        self.saving: set[int] = set()
        self.framework_calls: list[CallInfo] = []
        self.root_defs: dict[CallInfo, frozenset[cst.CSTNode]] = {}

    # -- hooks the interpreter provides ---------------------------------------------------

    def exec_block(self, body, state: State, frame: Frame, owner: cst.CSTNode) -> None:  # pragma: no cover
        raise NotImplementedError

    def call_function(self, info: FunctionInfo, args: Args, kwargs: dict[str, Value], state: State,
                      frame: Frame, self_value: Value | None, call: cst.CSTNode) -> Value:  # pragma: no cover
        raise NotImplementedError

    def instantiate(self, info: ClassInfo, args: Args, kwargs: dict[str, Value], state: State,
                    frame: Frame, call: cst.CSTNode, label: str | None) -> Value:  # pragma: no cover
        raise NotImplementedError

    def method_of(self, info: ClassInfo, name: str) -> FunctionInfo | None:  # pragma: no cover
        raise NotImplementedError

    def element_of(self, iterable: Value) -> Value:  # pragma: no cover
        raise NotImplementedError

    def tick(self) -> None:  # pragma: no cover
        raise NotImplementedError

    # -- names, holders ----------------------------------------------------------------------

    def site(self, node: cst.CSTNode) -> int:
        """A stable small integer for an expression site."""
        site = self.sites.get(node)
        if site is None:
            site = self.sites[node] = len(self.sites) + 1
        return site

    def holder_of(self, expr: cst.BaseExpression, state: State, frame: Frame) -> Holder | None:
        """The named place an expression reads or writes, if it is one."""
        if isinstance(expr, cst.Name):
            return Holder("variable", (expr.value,), expr.value)
        if isinstance(expr, cst.Attribute):
            base = expr.value
            owner = self.peek(base, state, frame)
            if owner is not None and owner.kind is Kind.INSTANCE and isinstance(owner.ref, ClassInfo):
                text = dotted(expr) or f"<expr>.{expr.attr.value}"
                return Holder("attribute", (owner.ref.key, expr.attr.value), text)
            text = dotted(expr)
            if text is not None and owner is not None and owner.kind in (Kind.UNKNOWN, Kind.MODULE):
                return Holder("attribute", ("<opaque>", text), text)
        return None

    def peek(self, expr: cst.BaseExpression, state: State, frame: Frame) -> Value | None:
        """The value of a name or attribute chain without side effects (None if unknown)."""
        if isinstance(expr, cst.Name):
            return self.lookup(expr.value, state, frame)
        if isinstance(expr, cst.Attribute):
            owner = self.peek(expr.value, state, frame)
            if owner is None:
                return None
            return self.attribute_value(owner, expr, state, frame)
        return None

    def lookup(self, name: str, state: State, frame: Frame) -> Value | None:
        """A variable's value: the frame's locals, enclosing frames for closures, then globals."""
        if name in frame.global_names:
            return state.frames[0].get(name)
        top = state.frames[-1]
        if name in top:
            return top[name]
        if frame.function is not None and frame.function.nested:
            for outer in reversed(state.frames[1:-1]):
                if name in outer:
                    return outer[name]
        return state.frames[0].get(name)

    def store_name(self, name: str, value: Value, state: State, frame: Frame, statement: cst.CSTNode) -> None:
        """Bind a variable in the right frame, remembering the statement that assigned it."""
        index = 0 if name in frame.global_names else len(state.frames) - 1
        state.frames[index][name] = value
        state.defs[index][name] = frozenset({statement})

    def note_reset(self, target: cst.BaseExpression, value: Value, state: State, frame: Frame) -> None:
        """A container emptied inside a loop (`xs = []`, `del xs[:]`) does not grow across it."""
        if frame.loops and value.kind in (Kind.LIST, Kind.DICT) and not value.nodes:
            holder = self.holder_of(target, state, frame)
            if holder is not None:
                self.reset_holders.add(holder.key)

    def store_in_place(self, target: cst.BaseExpression, value: Value, state: State, frame: Frame,
                       statement: cst.CSTNode) -> None:
        """A container changed in place (`xs.append(v)`): update it where the name lives."""
        self.note_reset(target, value, state, frame)
        if isinstance(target, cst.Name) and target.value not in state.frames[-1]:
            name = target.value
            index = 0
            if frame.function is not None and frame.function.nested:
                for position in range(len(state.frames) - 2, 0, -1):
                    if name in state.frames[position]:
                        index = position
                        break
            if name in state.frames[index]:
                state.frames[index][name] = value
                state.defs[index][name] = state.defs[index].get(name, frozenset()) | {statement}
                return
        self.assign(target, value, state, frame, statement, None)

    def forget(self, name: str, state: State, frame: Frame) -> None:
        """A name now means something the model does not follow (an import, a `del`)."""
        index = 0 if name in frame.global_names else len(state.frames) - 1
        state.frames[index].pop(name, None)
        state.defs[index].pop(name, None)

    def defs_of(self, holder: Holder, state: State, frame: Frame) -> frozenset[cst.CSTNode]:
        """The statements that last assigned a holder."""
        if holder.kind == "variable":
            name = holder.key[0]
            if name in frame.global_names:
                return state.defs[0].get(name, frozenset())
            if name in state.frames[-1]:
                return state.defs[-1].get(name, frozenset())
            if frame.function is not None and frame.function.nested:
                for position in range(len(state.frames) - 2, 0, -1):
                    if name in state.frames[position]:
                        return state.defs[position].get(name, frozenset())
            return state.defs[0].get(name, frozenset())
        return state.hdefs.get(holder.key, frozenset())  # type: ignore[arg-type]

    def qualified(self, expr: cst.BaseExpression, state: State, frame: Frame) -> str | None:
        """The qualified name of an imported callable, unless a variable shadows it."""
        head = expr
        while isinstance(head, cst.Attribute):
            head = head.value
        if isinstance(head, cst.Name) and self.lookup(head.value, state, frame) is not None:
            return None
        name = qualify(expr, frame.imports) or qualify(expr, self.imports)
        if name is None and isinstance(expr, cst.Name) and expr.value in _BUILTINS:
            return expr.value
        return canonical(name) if name is not None else None

    # -- assignment ------------------------------------------------------------------------

    def assign(self, target: cst.BaseExpression, value: Value, state: State, frame: Frame,
               statement: cst.CSTNode, source: cst.CSTNode | None) -> None:
        """Bind `value` to an assignment target (names, attributes, subscripts, tuples)."""
        if isinstance(target, (cst.Name, cst.Attribute)):
            self.note_reset(target, value, state, frame)
            if value.kind is Kind.NONE:
                holder = self.holder_of(target, state, frame)
                if holder is not None:
                    self.none_assigned.add(holder.key)
        if isinstance(target, cst.Name):
            self.store_name(target.value, value, state, frame, statement)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = [e for e in target.elements]
            if isinstance(source, (cst.Name, cst.Attribute)) and value.nodes and not value.via:
                # `cos, sin = self.cache`: the parts still come from `self.cache`.
                value = replace(value, via=tuple(self.reads_of([(source, value)], state, frame, None)))
                if value.elems is not None:
                    value = replace(value, elems=tuple(replace(e, via=value.via) if e.nodes else e
                                                       for e in value.elems))
            for index, element in enumerate(elements):
                inner = element.value
                if isinstance(element, cst.StarredElement):
                    part = value
                elif value.elems is not None and len(value.elems) == len(elements):
                    part = value.elems[index]
                elif value.kind is Kind.DATA:
                    part = DATA
                else:
                    part = Value(Kind.UNKNOWN, value.nodes, value.top, value.grad, via=value.via)
                self.assign(inner, part, state, frame, statement, source)
        elif isinstance(target, cst.Attribute):
            owner = self.eval(target.value, state, frame)
            if owner.kind is Kind.INSTANCE and isinstance(owner.ref, ClassInfo):
                key = (owner.ref.key, target.attr.value)
                state.heap[key] = value
                state.hdefs[key] = frozenset({statement})
                if target.attr.value == "automatic_optimization":
                    owner.ref.manual_optimization = True
            elif target.attr.value == "requires_grad":
                holder_value = self.peek(target.value, state, frame)
                if holder_value is not None:
                    if isinstance(source, cst.Name) and source.value == "False":
                        self.freeze(holder_value, dotted(target.value))
                    else:
                        state.replace_everywhere(holder_value, replace(holder_value, grad=True))
            elif value.nodes:
                self.escaped.update(value.nodes)
        elif isinstance(target, cst.Subscript):
            container = self.eval(target.value, state, frame)
            updated = self.container_add(container, value)
            self.store_in_place(target.value, updated, state, frame, statement)
        elif isinstance(target, cst.StarredElement):
            self.assign(target.value, value, state, frame, statement, source)

    # -- expressions -----------------------------------------------------------------------

    def eval(self, expr: cst.BaseExpression, state: State, frame: Frame) -> Value:
        """The abstract value of an expression (may change `state`: calls have effects)."""
        if isinstance(expr, cst.Name):
            if expr.value == "None":
                return NONE
            if expr.value in ("True", "False"):
                return SCALAR
            value = self.lookup(expr.value, state, frame)
            return value if value is not None else UNKNOWN
        if isinstance(expr, cst.Attribute):
            owner = self.eval(expr.value, state, frame)
            result = self.attribute_value(owner, expr, state, frame)
            if result.nodes and owner.nodes and result.kind is not Kind.INSTANCE and owner.kind is not Kind.INSTANCE:
                # A view of a tensor (`x.T`, `out.logits`): reads of it are reads of `x`.
                via = tuple(self.reads_of([(expr.value, owner)], state, frame, None))
                if via:
                    result = replace(result, via=via)
            return result
        if isinstance(expr, cst.Call):
            return self.eval_call(expr, state, frame)
        if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString,
                             cst.ConcatenatedString, cst.FormattedString, cst.Ellipsis)):
            if isinstance(expr, cst.FormattedString):
                for part in expr.parts:
                    if isinstance(part, cst.FormattedStringExpression):
                        self.eval(part.expression, state, frame)
            return SCALAR
        if isinstance(expr, cst.BinaryOperation):
            left = self.eval(expr.left, state, frame)
            right = self.eval(expr.right, state, frame)
            if left.kind in (Kind.LIST, Kind.TUPLE) and isinstance(expr.operator, cst.Add):
                return self.container_add(left, right)
            return self.derive(expr, [(expr.left, left), (expr.right, right)], state, frame)
        if isinstance(expr, cst.UnaryOperation):
            operand = self.eval(expr.expression, state, frame)
            if isinstance(expr.operator, cst.Not):
                return SCALAR
            return self.derive(expr, [(expr.expression, operand)], state, frame)
        if isinstance(expr, cst.BooleanOperation):
            left = self.eval(expr.left, state, frame)
            right = self.eval(expr.right, state, frame)
            return join(left, right)
        if isinstance(expr, cst.Comparison):
            self.eval(expr.left, state, frame)
            for comparison in expr.comparisons:
                self.eval(comparison.comparator, state, frame)
            return SCALAR
        if isinstance(expr, cst.Subscript):
            return self.eval_subscript(expr, state, frame)
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            kind = Kind.TUPLE if isinstance(expr, cst.Tuple) else Kind.LIST
            values = []
            via: list[Read] = []
            for element in expr.elements:
                inner = self.eval(element.value, state, frame)
                via.extend(self.reads_of([(element.value, inner)], state, frame, None))
                values.append(inner)
            result = self.container_of(kind, values, exact=not any(isinstance(e, cst.StarredElement) for e in expr.elements))
            return replace(result, via=tuple(via)) if via else result
        if isinstance(expr, cst.Dict):
            values = []
            for element in expr.elements:
                if isinstance(element, cst.DictElement):
                    self.eval(element.key, state, frame)
                values.append(self.eval(element.value, state, frame))
            return self.container_of(Kind.DICT, values)
        if isinstance(expr, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            return self.eval_comprehension(expr, state, frame)
        if isinstance(expr, cst.IfExp):
            self.eval(expr.test, state, frame)
            return join(self.eval(expr.body, state, frame), self.eval(expr.orelse, state, frame))
        if isinstance(expr, cst.Lambda):
            info = self.functions.get(expr)
            if info is None:
                info = FunctionInfo(expr, "<lambda>", nested=True)
                self.functions[expr] = info
            return Value(Kind.FUNCTION, ref=info)
        if isinstance(expr, cst.NamedExpr):
            value = self.eval(expr.value, state, frame)
            statement = frame.statements[-1][1] if frame.statements else expr
            self.assign(expr.target, value, state, frame, statement, expr.value)
            return value
        if isinstance(expr, (cst.Await, cst.Yield)):
            inner = getattr(expr, "expression", None) or getattr(expr, "value", None)
            if isinstance(inner, cst.BaseExpression):
                return self.eval(inner, state, frame)
            return UNKNOWN
        if isinstance(expr, cst.StarredElement):
            return self.eval(expr.value, state, frame)
        return UNKNOWN

    def eval_subscript(self, expr: cst.Subscript, state: State, frame: Frame) -> Value:
        base = self.eval(expr.value, state, frame)
        index: int | None = None
        for element in expr.slice:
            if isinstance(element.slice, cst.Index):
                self.eval(element.slice.value, state, frame)
                literal = element.slice.value
                if isinstance(literal, cst.Integer):
                    index = int(literal.value)
                elif isinstance(literal, cst.UnaryOperation) and isinstance(literal.expression, cst.Integer):
                    index = -int(literal.expression.value)
        if base.elems is not None and index is not None and -len(base.elems) <= index < len(base.elems):
            return base.elems[index]
        member = self.member_of(base) if base.kind in (Kind.MODULE, Kind.LIST) else None
        if member is not None:
            return member if index is not None else replace(base, label=None)
        if base.kind in (Kind.LIST, Kind.TUPLE, Kind.DICT):
            return self.element_of(base)
        if base.kind is Kind.DATA:
            return DATA
        return self.derive(expr, [(expr.value, base)], state, frame)

    def eval_comprehension(self, expr: cst.BaseExpression, state: State, frame: Frame) -> Value:
        scratch = state.copy()
        scratch.frames.append(dict(scratch.frames[-1]))
        scratch.defs.append(dict(scratch.defs[-1]))
        inner_frame = frame
        clause: cst.CompFor | None = expr.for_in  # type: ignore[attr-defined]
        while clause is not None:
            iterable = self.eval(clause.iter, scratch, inner_frame)
            element = self.element_from(clause.iter, iterable, scratch, inner_frame)
            self.assign(clause.target, element, scratch, inner_frame, expr, clause.iter)
            for condition in clause.ifs:
                self.eval(condition.test, scratch, inner_frame)
            clause = clause.inner_for_in
        if isinstance(expr, cst.DictComp):
            self.eval(expr.key, scratch, inner_frame)
            element = self.eval(expr.value, scratch, inner_frame)
        else:
            element = self.eval(expr.elt, scratch, inner_frame)  # type: ignore[attr-defined]
        scratch.frames.pop()
        scratch.defs.pop()
        # Effects of calls inside the comprehension (backward calls, attribute writes) are kept.
        self._adopt_effects(state, scratch)
        kind = Kind.DICT if isinstance(expr, cst.DictComp) else Kind.LIST
        member = element if element.kind is Kind.INSTANCE else None
        return Value(kind, element.nodes, element.top, element.grad, ref=member)

    @staticmethod
    def _adopt_effects(state: State, scratch: State) -> None:
        state.heap = scratch.heap
        state.hdefs = scratch.hdefs
        state.freed = scratch.freed
        state.epochs = scratch.epochs
        for index in range(len(state.frames)):
            state.frames[index] = scratch.frames[index]

    def attribute_value(self, owner: Value, expr: cst.Attribute, state: State, frame: Frame) -> Value:
        """`owner.attr`: heap attributes of instances, `.data`/`.grad` cuts, views of tensors."""
        name = expr.attr.value
        if owner.kind is Kind.INSTANCE and isinstance(owner.ref, ClassInfo):
            value = state.heap.get((owner.ref.key, name))
            if value is not None:
                return value
            method = self.method_of(owner.ref, name)
            if method is not None:
                return Value(Kind.FUNCTION, ref=method, label=dotted(expr))
            if name in K.MODULE_METHODS:
                return Value(Kind.FUNCTION, label=dotted(expr))
            if owner.ref.is_module and name not in ("training",):
                # An attribute of a module that the model did not see being set: a parameter.
                return Value(Kind.TENSOR, grad=True, label=dotted(expr))
            return UNKNOWN
        if name in ("data", "grad", "shape", "dtype", "device", "requires_grad", "is_leaf", "ndim"):
            return FRESH if name in ("data", "grad") else SCALAR
        if owner.kind in (Kind.TENSOR, Kind.UNKNOWN) and (owner.nodes or owner.grad):
            # A view or a field of a model output (`out.logits`, `x.T`): same graph.
            return Value(Kind.UNKNOWN, owner.nodes, owner.top, owner.grad)
        text = dotted(expr)
        if text is not None and text in self.module_names:
            return Value(Kind.MODULE, label=text)
        if owner.kind is Kind.DATA:
            return DATA
        return UNKNOWN

    # -- operations that build graph -----------------------------------------------------

    def derive(self, node: cst.CSTNode, operands: Args, state: State, frame: Frame,
               source: bool = False, consumer: str | None = None) -> Value:
        """The result of an operation on `operands`: a new graph node if any of them requires grad."""
        needs_grad = source or any(v.grad or v.nodes for _, v in operands)
        if state.no_grad or not needs_grad:
            if any(v.kind is Kind.DATA for _, v in operands):
                return DATA
            kinds = {v.kind for _, v in operands}
            return FRESH if kinds == {Kind.TENSOR} else UNKNOWN
        site = self.site(node)
        if source or self.saves_tensors(node, state, frame):
            self.saving.add(site)
        epoch = state.epochs.get(site, 0)
        if epoch:
            state.rename_site(site)
            self._age_origin(site)
            operands = [(expr, rename(value, site)) for expr, value in operands]
        state.epochs[site] = epoch + 1
        current = node_id(site)
        nodes = frozenset({current}).union(*(v.nodes for _, v in operands))
        reads = self.reads_of(operands, state, frame, consumer)
        parents = frozenset().union(*(v.top for _, v in operands))
        sites = {n // GENERATIONS for n in parents}
        for read in reads:
            sites.update(n // GENERATIONS for n in read.top)
        stamps = {site_: state.epochs.get(site_, 0) for site_ in sites}
        self.origins[current] = Origin(reads, parents, tuple(frame.loops), node, stamps)
        return Value(Kind.TENSOR, nodes, frozenset({current}), True)

    def element_from(self, expr: cst.BaseExpression, iterable: Value, state: State, frame: Frame) -> Value:
        """An element of an iterable, remembering which container it was taken from."""
        element = self.element_of(iterable)
        if not element.nodes:
            return element
        via = tuple(self.reads_of([(expr, iterable)], state, frame, None))
        return replace(element, via=via) if via else element

    def reads_of(self, operands: Args, state: State, frame: Frame, consumer: str | None) -> list[Read]:
        """The reads of named holders among the operands of an operation."""
        reads: list[Read] = []
        for expr, value in operands:
            if not value.nodes:
                continue
            holder = self.holder_of(expr, state, frame) if expr is not None else None
            if holder is None:
                reads.extend(value.via)
                continue
            outer = None
            if holder.kind == "variable" and holder.key[0] in frame.param_reads:
                passed_read, passed_value = frame.param_reads[holder.key[0]]
                if value.nodes <= passed_value.nodes | {old(n) for n in passed_value.nodes}:  # type: ignore[attr-defined]
                    outer = passed_read
            elif value.via:
                # An element taken out of a container: the container is what carries it over.
                outer = value.via[0]
            reads.append(Read(holder, value.nodes, expr, self.statement(frame), consumer, value.top,
                              self.defs_of(holder, state, frame), tuple(frame.statements),
                              frame.function, _shape(value), value.maybe_none, outer))  # type: ignore[arg-type]
        return reads

    def argument_reads(self, params: list[str], args: Args, state: State, frame: Frame,
                       call: cst.CSTNode) -> dict[str, tuple[Read, Value]]:
        """How each parameter of an inlined call was passed, when it was a caller's variable."""
        label = dotted(call.func) if isinstance(call, cst.Call) else None
        found: dict[str, tuple[Read, Value]] = {}
        for name, (expr, value) in zip(params, args):
            if expr is None or not value.nodes:
                continue
            holder = self.holder_of(expr, state, frame)
            if holder is None:
                continue
            read = Read(holder, value.nodes, expr, self.statement(frame), label, value.top,
                        self.defs_of(holder, state, frame), tuple(frame.statements), frame.function,
                        _shape(value), value.maybe_none, self._outer_of(holder, value, frame))
            found[name] = (read, value)
        return found

    def _outer_of(self, holder: Holder, value: Value, frame: Frame) -> Read | None:
        if holder.kind == "variable" and holder.key[0] in frame.param_reads:
            passed_read, passed_value = frame.param_reads[holder.key[0]]
            if value is passed_value:
                return passed_read  # type: ignore[return-value]
        return None

    def saves_tensors(self, node: cst.CSTNode, state: State, frame: Frame) -> bool:
        """Whether the autograd node an expression makes keeps saved tensors (that a backward frees)."""
        if isinstance(node, cst.BinaryOperation):
            return not isinstance(node.operator, (cst.Add, cst.Subtract))
        if isinstance(node, cst.AugAssign):
            return not isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign))
        if isinstance(node, cst.UnaryOperation):
            return not isinstance(node.operator, (cst.Minus, cst.Plus))
        if isinstance(node, cst.Subscript):
            return not all(isinstance(e.slice, cst.Slice) or (
                isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.Integer, cst.Ellipsis, cst.Name))
                and not (isinstance(e.slice.value, cst.Name) and e.slice.value.value not in ("None",)))
                for e in node.slice)
        if isinstance(node, cst.Call):
            if isinstance(node.func, cst.Attribute) and node.func.attr.value in K.NON_SAVING_METHODS:
                name = self.qualified(node.func, state, frame)
                return name is not None and name not in K.NON_SAVING_FUNCTIONS
            name = self.qualified(node.func, state, frame)
            return name not in K.NON_SAVING_FUNCTIONS
        return True

    def _age_origin(self, site: int) -> None:
        base = site * GENERATIONS
        last = base + GENERATIONS - 1
        for node in range(last - 1, base - 1, -1):
            origin = self.origins.pop(node, None)
            if origin is None:
                continue
            previous = self.origins.get(node + 1) if node + 1 == last else None
            if previous is None:
                self.origins[node + 1] = origin
            else:
                merged = previous.reads + [r for r in origin.reads if r not in previous.reads][:8]
                self.origins[last] = Origin(merged[:16], previous.parents | origin.parents,
                                            previous.loops, previous.expr,
                                            {**previous.stamps, **origin.stamps})

    @staticmethod
    def statement(frame: Frame) -> cst.CSTNode | None:
        return frame.statements[-1][1] if frame.statements else None

    def container_of(self, kind: Kind, values: list[Value], exact: bool = True) -> Value:
        """A tuple, list or dict holding `values`."""
        nodes = frozenset().union(*(v.nodes for v in values)) if values else frozenset()
        top = frozenset().union(*(v.top for v in values)) if values else frozenset()
        grad = any(v.grad for v in values)
        elems = tuple(values) if exact and kind is Kind.TUPLE else None
        return Value(kind, nodes, top, grad, elems)

    def container_add(self, container: Value, item: Value) -> Value:
        """A container after a value was added to it (`append`, `+=`, `d[k] = v`)."""
        kind = container.kind if container.kind in (Kind.LIST, Kind.DICT, Kind.TUPLE) else Kind.LIST
        return Value(kind, container.nodes | item.nodes, container.top | item.top,
                     container.grad or item.grad)

    # -- calls -------------------------------------------------------------------------------

    def eval_call(self, call: cst.Call, state: State, frame: Frame) -> Value:
        func = call.func
        if isinstance(func, cst.Attribute):
            return self.eval_method_call(call, func, state, frame)
        name = self.qualified(func, state, frame)
        if name is not None:
            return self.eval_known_call(call, name, state, frame)
        callee = self.eval(func, state, frame)
        args, kwargs = self.eval_args(call, state, frame)
        return self.call_value(call, callee, dotted(func), args, kwargs, state, frame)

    def eval_args(self, call: cst.Call, state: State, frame: Frame) -> tuple[Args, dict[str, Value]]:
        args: Args = []
        kwargs: dict[str, Value] = {}
        for arg in call.args:
            value = self.eval(arg.value, state, frame)
            if arg.keyword is not None:
                kwargs[arg.keyword.value] = value
                args_entry = None
            else:
                args_entry = (arg.value, value)
            if args_entry is not None and not arg.star:
                args.append(args_entry)
            elif arg.star:
                kwargs[f"*{len(kwargs)}"] = value
        return args, kwargs

    def call_value(self, call: cst.Call, callee: Value, label: str | None, args: Args,
                   kwargs: dict[str, Value], state: State, frame: Frame) -> Value:
        """Call a value: a function or class of this file, a module, or something opaque."""
        if callee.kind is Kind.FUNCTION and isinstance(callee.ref, FunctionInfo):
            return self.call_function(callee.ref, args, kwargs, state, frame, None, call)
        if callee.kind is Kind.CLASS and isinstance(callee.ref, ClassInfo):
            return self.instantiate(callee.ref, args, kwargs, state, frame, call, label)
        if callee.kind is Kind.INSTANCE and isinstance(callee.ref, ClassInfo):
            method = self.method_of(callee.ref, "forward") or self.method_of(callee.ref, "__call__")
            if method is not None:
                result = self.call_function(method, args, kwargs, state, frame, callee, call)
                return self.run_hooks(call, callee, args, result, state, frame)
        operands: Args = [*args, *((None, v) for v in kwargs.values())]
        is_module = callee.kind is Kind.MODULE or (callee.kind is Kind.INSTANCE)
        if (is_module and callee.qual in K.PARAMETERLESS_MODULES) or (label is not None and label in self.frozen):
            return self.derive(call, operands, state, frame, consumer=label)
        if is_module or (callee.kind is Kind.UNKNOWN and label is not None and label in self.module_names):
            result = self.derive(call, operands, state, frame, source=True, consumer=label)
            result = replace(result, label=label)
            result = self.shape_recurrent(callee, result)
            return self.run_hooks(call, callee, args, result, state, frame)
        return self.derive(call, operands, state, frame, consumer=label)

    def shape_recurrent(self, callee: Value, result: Value) -> Value:
        """`nn.LSTM` returns `(output, (h, c))`; `nn.GRU` and `nn.RNN` return `(output, h)`."""
        if callee.qual in K.RECURRENT_TUPLE_STATE:
            part = replace(result, elems=None)
            state_value = Value(Kind.TUPLE, result.nodes, result.top, True, (part, part))
            return Value(Kind.TUPLE, result.nodes, result.top, True, (part, state_value), label=result.label)
        if callee.qual in K.RECURRENT_TUPLE_CELLS:
            part = replace(result, elems=None)
            return Value(Kind.TUPLE, result.nodes, result.top, True, (part, part), label=result.label)
        if callee.qual in K.RECURRENT_TENSOR_STATE:
            part = replace(result, elems=None)
            return Value(Kind.TUPLE, result.nodes, result.top, True, (part, part), label=result.label)
        return result

    def run_hooks(self, call: cst.Call, module: Value, args: Args, output: Value, state: State,
                  frame: Frame) -> Value:
        """Forward hooks registered on modules see every module call's output."""
        hooks = state.heap.get(("<hooks>", "forward"))
        if hooks is None or hooks.elems is None:
            return output
        for hook in hooks.elems:
            if hook.kind is Kind.FUNCTION and isinstance(hook.ref, FunctionInfo):
                inputs = self.container_of(Kind.TUPLE, [v for _, v in args])
                self.call_function(hook.ref, [(None, module), (None, inputs), (None, output)], {},
                                   state, frame, None, call)
        return output

    def eval_known_call(self, call: cst.Call, name: str, state: State, frame: Frame) -> Value:
        """A call of an imported callable, known by its qualified name."""
        args, kwargs = self.eval_args(call, state, frame)
        if name in K.BACKWARD_FUNCTIONS:
            roots = args[:1] or [(None, kwargs.get("tensors", UNKNOWN))]
            self.backward(call, "backward", roots, kwargs, state, frame, positional_retain=None)
            return NONE
        if name in K.GRAD_FUNCTIONS:
            return self.grad(call, args, kwargs, state, frame)
        if name in K.CUT_FUNCTIONS or name in K.NO_GRAD or name in K.ENABLE_GRAD:
            return SCALAR if name not in ("torch.tensor", "torch.as_tensor", "torch.from_numpy") else FRESH
        if name in K.FACTORIES:
            requires = kwargs.get("requires_grad")
            flag = self._literal_kwarg(call, "requires_grad")
            return Value(Kind.TENSOR, grad=bool(requires is not None and flag is not False))
        if name in K.PARAMETER_TYPES:
            return Value(Kind.TENSOR, grad=True)
        if name in K.DATA_FUNCTIONS:
            return DATA
        if name in ("zip", "reversed", "list", "tuple", "sorted", "iter", "next", "set", "dict", "enumerate"):
            values = [v for _, v in args]
            if values and all(v.kind is Kind.DATA for v in values):
                return DATA
            via = tuple(self.reads_of(args, state, frame, None))
            if name in ("list", "tuple") and values and values[0].kind in (Kind.LIST, Kind.TUPLE):
                merged = replace(values[0], kind=Kind.LIST if name == "list" else Kind.TUPLE)
            else:
                merged = self.container_of(Kind.LIST, [self.element_of(v) if name in ("zip", "enumerate") else v
                                                       for v in values])
            return replace(merged, via=via or merged.via)
        if name in K.MODULE_WRAPPERS:
            return args[0][1] if args else UNKNOWN
        if name.startswith("torch.optim.") and name.rsplit(".", 1)[-1][:1].isupper():
            owner = self._optimizer_owner(call)
            if "lr_scheduler" in name:
                return UNKNOWN
            return Value(Kind.OPTIMIZER, ref=owner, qual=name)
        if name in K.MODULE_CONTAINERS:
            members = [self.member_of(v) for _, v in args]
            instances = [m for m in members if m is not None]
            member = instances[0] if instances and len(instances) == len(members) else None
            return Value(Kind.MODULE, qual=name, label=dotted(call.func), ref=member)
        if name.startswith("torch.nn.") and name.rsplit(".", 1)[-1][:1].isupper():
            return Value(Kind.MODULE, qual=name, label=dotted(call.func))
        if name.startswith(K.DISTRIBUTION_PREFIX) and name.rsplit(".", 1)[-1][:1].isupper():
            operands: Args = [*args, *((None, v) for v in kwargs.values())]
            result = self.derive(call, operands, state, frame)
            return replace(result, qual=name, kind=Kind.UNKNOWN)
        operands = [*args, *((None, v) for v in kwargs.values())]
        if name in ("sum", "max", "min", "torch.stack", "torch.cat", "torch.sum", "torch.mean"):
            flat = [(e, self.element_of(v) if v.kind in (Kind.LIST, Kind.TUPLE) and not v.elems else v)
                    for e, v in operands]
            flat = [(e, v) if v.kind not in (Kind.LIST, Kind.TUPLE) else (e, v) for e, v in flat]
            return self.derive(call, operands, state, frame)
        return self.derive(call, operands, state, frame, consumer=dotted(call.func))

    @staticmethod
    def member_of(value: Value) -> Value | None:
        """The module of this file that a value is, or that a list of modules holds."""
        if value.kind is Kind.INSTANCE:
            return value
        if isinstance(value.ref, Value) and value.ref.kind is Kind.INSTANCE:
            return value.ref
        return None

    @staticmethod
    def _literal_positional(call: cst.Call, default: bool) -> bool | None:
        """The literal True/False first argument of a call (its default when there is none)."""
        if not call.args:
            return default
        value = call.args[0].value
        if isinstance(value, cst.Name) and value.value in ("True", "False"):
            return value.value == "True"
        return None

    def freeze(self, value: Value, label: str | None) -> None:
        """`requires_grad_(False)` on a module or on each of its parameters: calls of that module
        build no graph of their own any more."""
        if value.label and value.label.startswith("params:"):
            self.frozen.add(value.label.removeprefix("params:"))
        elif label is not None and (value.kind in (Kind.MODULE, Kind.INSTANCE) or label in self.module_names):
            self.frozen.add(label)

    def _literal_kwarg(self, call: cst.Call, keyword: str) -> bool | None:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == keyword:
                if isinstance(arg.value, cst.Name) and arg.value.value in ("True", "False"):
                    return arg.value.value == "True"
                return None
        return False

    def _optimizer_owner(self, call: cst.Call) -> str | None:
        """`Adam(netD.parameters())` is owned by `netD`."""
        if not call.args:
            return None
        first = call.args[0].value
        if isinstance(first, cst.Call) and isinstance(first.func, cst.Attribute) \
                and first.func.attr.value in ("parameters", "named_parameters"):
            return dotted(first.func.value)
        return None

    def eval_method_call(self, call: cst.Call, func: cst.Attribute, state: State, frame: Frame) -> Value:
        method = func.attr.value
        name = self.qualified(func, state, frame)
        if name is not None:
            return self.eval_known_call(call, name, state, frame)
        receiver = self.eval(func.value, state, frame)
        label = dotted(func.value)
        if receiver.kind is Kind.INSTANCE and isinstance(receiver.ref, ClassInfo):
            info = self.method_of(receiver.ref, method)
            if info is not None:
                args, kwargs = self.eval_args(call, state, frame)
                result = self.call_function(info, args, kwargs, state, frame, receiver, call)
                if "step" in method and receiver.ref.is_optimizer:
                    # An optimizer of this file (SAM's first_step/second_step) updates weights.
                    self.optimizer_step(receiver, label, state)
                return result
            if method in ("parameters", "named_parameters", "buffers"):
                self.eval_args(call, state, frame)
                return Value(Kind.LIST, grad=method != "buffers")
            if method in ("register_buffer", "register_parameter") and call.args:
                args, _ = self.eval_args(call, state, frame)
                name_node = call.args[0].value
                if isinstance(name_node, cst.SimpleString) and len(args) > 1:
                    stored = cut(args[1][1]) if method == "register_buffer" else Value(Kind.TENSOR, grad=True)
                    key = (receiver.ref.key, name_node.evaluated_value)
                    state.heap[key] = stored
                    statement = self.statement(frame)
                    if statement is not None:
                        state.hdefs[key] = frozenset({statement})
                return NONE
            if method == "manual_backward":
                args, kwargs = self.eval_args(call, state, frame)
                self.backward(call, "backward", args[:1], kwargs, state, frame, positional_retain=None)
                return NONE
        if receiver.kind is Kind.INSTANCE and isinstance(receiver.ref, ClassInfo):
            stored = state.heap.get((receiver.ref.key, method))
            attribute = stored if stored is not None else self.attribute_value(receiver, func, state, frame)
            if attribute.kind in (Kind.FUNCTION, Kind.MODULE, Kind.INSTANCE, Kind.CLASS) or (
                    attribute.kind is Kind.TENSOR and attribute.grad and stored is None):
                args, kwargs = self.eval_args(call, state, frame)
                if attribute.kind is Kind.TENSOR:
                    attribute = Value(Kind.MODULE, label=dotted(func))
                return self.call_value(call, attribute, dotted(func), args, kwargs, state, frame)
        if method == "backward":
            args, kwargs = self.eval_args(call, state, frame)
            if receiver.nodes or receiver.grad or not args:
                self.backward(call, "backward", [(func.value, receiver)], kwargs, state, frame,
                              positional_retain=args[1][1] if len(args) > 1 else None,
                              positional_exprs=[a for a, _ in args])
            else:
                self.backward(call, "backward", args[:1], kwargs, state, frame, positional_retain=None)
            return NONE
        if method in K.FRESH_METHODS:
            self.eval_args(call, state, frame)
            return FRESH
        if method in K.CUT_METHODS:
            self.eval_args(call, state, frame)
            return cut(receiver) if receiver.kind is not Kind.DATA else DATA
        if method in K.INPLACE_CUT_METHODS:
            self.eval_args(call, state, frame)
            if method == "requires_grad_":
                wanted = self._literal_positional(call, default=True)
                if wanted is False:
                    self.freeze(receiver, label)
                    return receiver
                updated = replace(receiver, grad=True)
            else:
                updated = cut(receiver)
            state.replace_everywhere(receiver, updated)
            return updated
        if method in ("append", "extend", "insert", "add", "update", "appendleft", "setdefault"):
            args, kwargs = self.eval_args(call, state, frame)
            item = args[-1][1] if args else UNKNOWN
            if method == "extend" and item.kind in (Kind.LIST, Kind.TUPLE):
                item = replace(item, kind=Kind.UNKNOWN, elems=None)
            if receiver.kind in (Kind.LIST, Kind.DICT) or (
                    receiver.kind is Kind.UNKNOWN and not receiver.grad and not receiver.nodes):
                updated = self.container_add(receiver, item)
                statement = self.statement(frame)
                if statement is not None:
                    self.store_in_place(func.value, updated, state, frame, statement)
                    if args:
                        self.note_accumulation(func.value, item, args[-1][0], statement, state, frame, container=True)
                return NONE
            return NONE
        if method in ("clear",) and receiver.kind in (Kind.LIST, Kind.DICT, Kind.UNKNOWN):
            statement = self.statement(frame)
            if statement is not None:
                self.store_in_place(func.value, Value(receiver.kind if receiver.kind is not Kind.UNKNOWN else Kind.LIST),
                                    state, frame, statement)
            return NONE
        if method in ("pop", "popleft", "get", "values", "items", "copy") and receiver.kind in (Kind.LIST, Kind.DICT, Kind.UNKNOWN):
            self.eval_args(call, state, frame)
            if method in ("values", "items", "copy"):
                return receiver
            return self.element_of(receiver) if receiver.kind is not Kind.UNKNOWN else receiver
        if method == "step" and receiver.kind is Kind.OPTIMIZER:
            args, kwargs = self.eval_args(call, state, frame)
            closure = args[0][1] if args else kwargs.get("closure")
            if closure is not None and closure.kind is Kind.FUNCTION and isinstance(closure.ref, FunctionInfo):
                times = 2 if receiver.qual in K.MULTI_CLOSURE_OPTIMIZERS else 1
                for _ in range(times):
                    self.call_function(closure.ref, [], {}, state, frame, None, call)
            self.optimizer_step(receiver, label, state)
            return UNKNOWN
        if method in ("zero_grad", "train", "eval", "to", "cuda", "cpu") and (
                receiver.kind in (Kind.MODULE, Kind.OPTIMIZER, Kind.INSTANCE) or label in self.module_names):
            self.eval_args(call, state, frame)
            return receiver
        if method == "register_forward_hook":
            args, _ = self.eval_args(call, state, frame)
            if args:
                hooks = state.heap.get(("<hooks>", "forward"))
                existing = hooks.elems if hooks is not None and hooks.elems is not None else ()
                state.heap[("<hooks>", "forward")] = Value(Kind.TUPLE, elems=(*existing, args[0][1]))
            return UNKNOWN
        if method == "sample" and receiver.qual and receiver.qual.startswith(K.DISTRIBUTION_PREFIX):
            self.eval_args(call, state, frame)
            return FRESH
        if method == "scale" and receiver.kind is not Kind.TENSOR:
            args, kwargs = self.eval_args(call, state, frame)
            return args[0][1] if args else UNKNOWN
        args, kwargs = self.eval_args(call, state, frame)
        operands: Args = [(func.value, receiver), *args, *((None, v) for v in kwargs.values())]
        if method in K.INPLACE_OPS and (receiver.nodes or receiver.grad):
            updated = self.derive(call, operands, state, frame)
            state.replace_everywhere(receiver, updated)
            return updated
        if receiver.kind is Kind.MODULE or (label is not None and label in self.module_names):
            if method in ("parameters", "named_parameters"):
                return Value(Kind.LIST, grad=True, label=f"params:{label}")
            if method in K.MODULE_EVIDENCE_METHODS or method in ("named_buffers",):
                return UNKNOWN
            result = self.derive(call, operands[1:], state, frame, source=True, consumer=dotted(func))
            return result
        if receiver.kind is Kind.DATA:
            return DATA
        if receiver.kind in (Kind.UNKNOWN, Kind.NONE, Kind.SCALAR) and not (receiver.nodes or receiver.grad):
            if any(v.nodes or v.grad for _, v in operands[1:]):
                return self.derive(call, operands[1:], state, frame, consumer=dotted(func))
            return UNKNOWN
        return self.derive(call, operands, state, frame)

    # -- backward, grad, optimizers ------------------------------------------------------

    def call_info(self, call: cst.CSTNode, kind: str, root_expr: cst.CSTNode | None, retain: bool,
                  create_graph: bool, frame: Frame) -> CallInfo:
        key = (id(call), tuple(id(loop) for loop in frame.loops))
        info = self.call_infos.get(key)
        if info is None:
            root_text = ""
            if root_expr is not None:
                root_text = self.code_of(root_expr)
            info = CallInfo(call, self.statement(frame), kind, root_text, root_expr, retain, create_graph,
                            tuple(frame.loops), frame.function.qualname if frame.function else "<module>")
            self.call_infos[key] = info
        return info

    def code_of(self, node: cst.CSTNode) -> str:
        return cst.Module(body=[]).code_for_node(node)

    def retain_flag(self, call: cst.Call, keyword: str, positional: Value | None,
                    positional_expr: cst.CSTNode | None = None) -> bool | None:
        """True/False for a literal flag, None when it is an expression the model cannot decide."""
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == keyword:
                value = arg.value
                if isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
                    return value.value == "True"
                return None
        if positional_expr is not None:
            if isinstance(positional_expr, cst.Name) and positional_expr.value in ("True", "False", "None"):
                return positional_expr.value == "True"
            return None
        return False

    def backward(self, call: cst.Call, kind: str, roots: Args, kwargs: dict[str, Value], state: State,
                 frame: Frame, positional_retain: Value | None, positional_exprs: list | None = None) -> None:
        """A backward pass over `roots`: report freed nodes it reaches, then free what it traverses."""
        retain_expr = positional_exprs[1] if positional_exprs and len(positional_exprs) > 1 else None
        create_expr = positional_exprs[2] if positional_exprs and len(positional_exprs) > 2 else None
        retain = self.retain_flag(call, "retain_graph", positional_retain, retain_expr)
        create = self.retain_flag(call, "create_graph", None, create_expr)
        keeps = retain is not False or create is not False
        for expr, value in roots:
            value = self.ensure_graph(expr, value, state, frame)
            info = self.call_info(call, kind, expr, retain is True or create is True, create is True, frame)
            holder = self.holder_of(expr, state, frame) if expr is not None else None
            if holder is not None:
                self.backward_holders.add(holder.key)
                self.root_defs[info] = self.root_defs.get(info, frozenset()) | self.defs_of(holder, state, frame)
            self.reach(info, value, state)
            self.release(info, value, keeps, state)

    def ensure_graph(self, expr: cst.BaseExpression | None, value: Value, state: State, frame: Frame) -> Value:
        """A value being backward-ed carries a graph, even when the model did not see it built
        (a model from another library called on data): give it a node where it was assigned."""
        if value.nodes or value.kind is not Kind.UNKNOWN:
            return value
        holder = self.holder_of(expr, state, frame) if expr is not None else None
        defs = self.defs_of(holder, state, frame) if holder is not None else frozenset()
        anchor: cst.CSTNode | None = next(iter(defs)) if len(defs) == 1 else expr
        if anchor is None:
            return value
        made = self.derive(anchor, [(None, value)], state, frame, source=True)
        if value is not UNKNOWN:
            state.replace_everywhere(value, made)
        elif holder is not None:
            self.rebind(holder, made, state, frame)
        return made

    def rebind(self, holder: Holder, value: Value, state: State, frame: Frame) -> None:
        """Change what a holder holds without counting it as an assignment."""
        if holder.kind == "variable":
            name = holder.key[0]
            index = 0 if name in frame.global_names or name not in state.frames[-1] else len(state.frames) - 1
            state.frames[index][name] = value
        elif holder.key[0] != "<opaque>":
            state.heap[holder.key] = value  # type: ignore[index]

    def reach(self, info: CallInfo, value: Value, state: State) -> None:
        """Record a conflict if the pass reaches nodes that are already freed."""
        self.backwarded.update(value.nodes)
        for read in self.reads_behind(value.top):
            current: Read | None = read
            while current is not None:
                self.backward_holders.add(current.holder.key)
                current = current.outer
        for retained_call, (nodes, stamps) in self.retains.items():
            # The same call counts too: a retaining backward in a loop over one precomputed graph.
            if translate(nodes, stamps, state.epochs) & value.nodes:
                self.retains_needed.add(retained_call)
        stale = frozenset(n for n in value.nodes if n in state.freed)
        self.call_roots.setdefault(info, value.top)
        # Only freed nodes that kept saved tensors make the second pass fail.
        failing = frozenset(n for n in stale if n // GENERATIONS in self.saving)
        if not failing:
            return
        strong = frozenset(n for n in failing if not state.freed[n].weak)
        why = state.freed[min(strong or stale)]
        key = (id(info), id(why.call))
        if key not in self.conflicts:
            boundary = tuple(self.boundary(value, stale, state.epochs))
            if not strong and not self._accumulating(boundary):
                return
            created = self.origins.get(min(stale))
            self.conflicts[key] = Met(info, why.call, value, stale, why, boundary,
                                      created.loops if created is not None else ())

    def _accumulating(self, boundary: tuple[Boundary, ...]) -> bool:
        """Whether a stale graph is reached through a container that grows across iterations
        (only then is an old node that may or may not be freed worth a finding)."""
        for found in boundary:
            current: Read | None = found.read
            while current is not None:
                key = current.holder.key
                if key in self.appended_holders and key not in self.reset_holders:
                    return True
                current = current.outer
        return False

    def boundary(self, value: Value, stale: frozenset[int], epochs: dict[int, int]) -> list[Boundary]:
        """Reads of a holder whose own value was stale, walking back from a root over fresh nodes."""
        found: list[Boundary] = []
        seen: set[int] = set()
        queue = [n for n in value.top if n not in stale]
        while queue:
            node = queue.pop()
            if node in seen:
                continue
            seen.add(node)
            origin = self.origins.get(node)
            if origin is None:
                continue
            for read in origin.reads:
                top = origin.now(read.top, epochs)
                reached = top & stale
                if reached:
                    if all(b.read is not read for b in found):
                        created = self.origins.get(min(reached))
                        found.append(Boundary(read, created.loops if created is not None else (),
                                              all(generation_of(n) for n in reached)))
                else:
                    queue.extend(n for n in top if n not in seen)
            queue.extend(n for n in origin.now(origin.parents, epochs) if n not in seen and n not in stale)
        return found

    def reads_behind(self, tops: frozenset[int]) -> list[Read]:
        """Every read of a holder behind some nodes (what fed a backward's root)."""
        found: list[Read] = []
        seen: set[int] = set()
        queue = list(tops)
        while queue and len(seen) < 2000:
            node = queue.pop()
            if node in seen:
                continue
            seen.add(node)
            origin = self.origins.get(node)
            if origin is None:
                continue
            found.extend(origin.reads)
            queue.extend(origin.parents)
        return found

    def release(self, info: CallInfo, value: Value, keeps: bool, state: State) -> None:
        """Free the nodes a non-retaining pass traversed."""
        if keeps:
            previous, _ = self.retains.get(info, (frozenset(), {}))
            if not previous:
                self.retains[info] = (value.nodes, stamps_of(value.nodes, state.epochs))
            return
        self.call_roots[info] = self.call_roots.get(info, frozenset()) | value.top
        if info not in self.call_reads:
            self.call_reads[info] = tuple(self.reads_behind(value.top))
        for node in value.nodes:
            known = state.freed.get(node)
            if known is None or known.weak:
                state.freed[node] = Freed(info)

    def grad(self, call: cst.Call, args: Args, kwargs: dict[str, Value], state: State, frame: Frame) -> Value:
        """`torch.autograd.grad(outputs, inputs, ...)`: frees the part between outputs and inputs."""
        outputs = args[0] if args else (None, kwargs.get("outputs", UNKNOWN))
        inputs = args[1][1] if len(args) > 1 else kwargs.get("inputs", UNKNOWN)
        positional = [a for a, _ in args]
        retain = self.retain_flag(call, "retain_graph", None, positional[3] if len(positional) > 3 else None)
        create = self.retain_flag(call, "create_graph", None, positional[4] if len(positional) > 4 else None)
        expr, value = outputs
        value = self.ensure_graph(expr, value, state, frame)
        info = self.call_info(call, "grad", expr, retain is True or create is True, create is True, frame)
        self.reach(info, value, state)
        traversed = replace(value, nodes=value.nodes - inputs.nodes)
        self.release(info, traversed, retain is not False or create is not False, state)
        if create is not False:
            return self.derive(call, [(expr, value), (None, inputs)], state, frame, source=True)
        return FRESH

    def optimizer_step(self, optimizer: Value, label: str | None, state: State) -> None:
        """Remember which optimizer stepped since each node was freed."""
        owner = optimizer.ref if isinstance(optimizer.ref, str) else (label or "optimizer")
        for node, why in list(state.freed.items()):
            if owner not in why.stepped:
                state.freed[node] = Freed(why.call, why.stepped | {owner}, why.weak)

    def note_accumulation(self, target: cst.BaseExpression, item: Value, item_expr: cst.CSTNode | None,
                          statement: cst.CSTNode, state: State, frame: Frame, container: bool) -> None:
        """`total += loss` or `losses.append(loss)` inside a loop, kept for GG010."""
        if not frame.loops or not item.nodes or item_expr is None:
            return
        holder = self.holder_of(target, state, frame)
        if holder is None:
            return
        if container:
            self.appended_holders.add(holder.key)
        previous = self.accumulations.get(statement)
        nodes = item.nodes | (previous[5] if previous else frozenset())
        self.accumulations[statement] = (holder, statement, item_expr, container, frame.loops[-1], nodes)


def _shape(value: Value) -> str:
    if value.kind is Kind.TUPLE and value.elems is not None:
        return "tuple"
    if value.kind in (Kind.LIST, Kind.DICT):
        return "container"
    return "tensor"


_BUILTINS = frozenset({"float", "int", "bool", "str", "repr", "len", "print", "isinstance", "range",
                       "enumerate", "zip", "reversed", "list", "tuple", "sorted", "iter", "next",
                       "sum", "max", "min", "set", "hasattr", "type", "format", "round", "open", "id",
                       "hash", "issubclass", "dict"})
