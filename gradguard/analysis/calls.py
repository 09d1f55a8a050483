"""Calls in the abstract interpreter: backward and grad, torch functions known by their qualified
name, functions and classes of the file (inlined), modules (graph sources), containers, optimizers."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache

import libcst as cst

from gradguard.analysis import api
from gradguard.analysis import knowledge as K
from gradguard.analysis.api import (
    INPLACE,
    Collects,
    Computes,
    Fact,
    Receiver,
    Returns,
    Role,
    When,
    parametrize,
)
from gradguard.analysis.api.torch_functions import PARAMETER_REQUIRES_GRAD, ROOT_KEYWORDS
from gradguard.analysis.api.torch_ops import TENSOR_PREFIX
from gradguard.analysis.api.torch_tensor import GRADIENT
from gradguard.analysis.conditions import option_dest, option_values
from gradguard.analysis.names import canonical, dotted, indexed, qualify
from gradguard.analysis.project import ModuleInfo
from gradguard.analysis.state import (
    OPAQUE,
    ClassInfo,
    Frame,
    FunctionInfo,
    State,
    heap_owner,
)
from gradguard.analysis.values import (
    CAPTURED,
    DATA,
    FRESH,
    MAX_UNROLLED,
    NONE,
    PARAMETERS,
    SCALAR,
    UNKNOWN,
    UNSURE_MODULE,
    WRITES_INPUT,
    Holder,
    Kind,
    Read,
    Value,
    cut,
    data_with,
    join,
    known_objects,
    made_by,
    members,
    opaque_object,
    owner_group,
    owners_in,
    requires_grad,
)
from gradguard.parse import walk

Args = list[tuple[cst.BaseExpression | None, Value]]

# The heap's object for the hooks registered on modules, keyed by the registering method.
HOOKS = "<hooks>"


class CallEvaluation:
    """How the evaluator handles a call, by what the callee is (a mixin of `Evaluator`)."""

    # -- calls -------------------------------------------------------------------------------

    def eval_call(self, call: cst.Call, state: State, frame: Frame) -> Value:
        func = call.func
        if self.declared:
            fact, receiver = self.declared_fact(func, state, frame)
            if fact is not None:
                return self.apply_declared(fact, call, receiver, state, frame)
        if isinstance(func, cst.Attribute):
            return self.eval_method_call(call, func, state, frame)
        name = self.qualified(func, state, frame)
        if name is not None:
            return self.eval_known_call(call, name, state, frame)
        callee = self.eval(func, state, frame)
        if is_api_reference(callee):
            return self.eval_known_call(call, callee.qual, state, frame)  # type: ignore[arg-type]
        args, kwargs = self.eval_args(call, state, frame)
        label = indexed(func)
        if isinstance(func, cst.Name) and callee.kind in (Kind.MODULE, Kind.INSTANCE):
            label = self.alias_of(func.value, state) or label
        return self.call_value(call, callee, label, args, kwargs, state, frame)

    def note_draw(self, frame: Frame) -> None:
        """A call drew fresh random numbers: the statement of the linted file that ran it (itself, or
        the call of a helper it is in) makes other values each time it runs (`draws`)."""
        statement = frame.local_call[1] if frame.local_call is not None else self.statement(frame)
        if statement is not None:
            self.drawing.add(statement)

    def alias_of(self, name: str, state: State) -> str | None:
        """The attribute chain a local name was last set to on this path (`fn = self.fraction_net`,
        `fn = None if self.target else self.fraction_net`): calling it calls that module."""
        defs = state.defs[-1].get(name)
        if defs is None or len(defs) != 1:
            return None
        statement = next(iter(defs))
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
            return None
        small = statement.body[0]
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name):
            return None
        source = small.value
        arms = [source.body, source.orelse] if isinstance(source, cst.IfExp) else [source]
        chains = {text for arm in arms if isinstance(arm, cst.Attribute) and (text := dotted(arm)) is not None}
        return next(iter(chains)) if len(chains) == 1 else None

    def declared_fact(self, func: cst.BaseExpression, state: State,
                      frame: Frame) -> tuple[Fact | None, Value | None]:
        """The project's declared fact for a callee (`utils.repackage_hidden`, or the method
        `engine.Engine.step` called on an instance of that class), and the receiver of a method."""
        name = qualify(func, frame.imports) or qualify(func, self.imports)
        if name is not None and canonical(name) in self.declared:
            return self.declared[canonical(name)], None
        if not isinstance(func, cst.Attribute):
            return None, None
        receiver = self.peek(func.value, state, frame)
        if receiver is None:
            return None, None
        owner = receiver.ref.qualname if isinstance(receiver.ref, ClassInfo) else receiver.qual
        fact = self.declared.get(f"{owner}.{func.attr.value}") if owner else None
        return fact, receiver if fact is not None else None

    def apply_declared(self, fact: Fact, call: cst.Call, receiver: Value | None, state: State,
                       frame: Frame) -> Value:
        """A call of a helper the project declared: it detaches, runs a backward, returns a fresh
        tensor, or keeps what it is given, whatever its source says."""
        args, kwargs = self.eval_args(call, state, frame)
        values = [v for _, v in args] + list(kwargs.values())
        if fact.backward is not None:
            roots = args[:1] if args else [(None, values[0])] if values else []
            self.backward(call, roots, {}, state, frame, positional_retain=None)
            return NONE
        if fact.returns is Returns.CUT:
            return cut(values[0]) if values else FRESH
        if fact.returns is Returns.FRESH:
            return FRESH
        if fact.stores is not None and values:
            if receiver is not None and isinstance(call.func, cst.Attribute):
                updated = self.container_add(receiver, values[-1])
                statement = self.statement(frame)
                if statement is not None:
                    self.store_in_place(call.func.value, updated, state, frame, statement)
                    state.replace_everywhere(receiver, updated)
                    self.note_accumulation(call.func.value, values[-1], (args[-1][0] if args else None),
                                           statement, state, frame, container=True)
            else:
                self.escaped.update(n for v in values for n in v.nodes)
            return UNKNOWN
        return self.derive(call, [*args, *((None, v) for v in kwargs.values())], state, frame)

    def eval_args(self, call: cst.Call, state: State, frame: Frame) -> tuple[Args, dict[str, Value]]:
        args: Args = []
        kwargs: dict[str, Value] = {}
        start = len(self.renamed)
        marks: dict[int, int] = {}  # id of an argument's expression -> the aging log when it was read
        slots: list[str | None] = []
        for arg in call.args:
            value = self.eval(arg.value, state, frame)
            marks[id(arg.value)] = len(self.renamed)
            slots.append(self.hold(value, state))
            if arg.keyword is not None:
                kwargs[arg.keyword.value] = value
                args_entry = None
            else:
                args_entry = (arg.value, value)
            if args_entry is not None and not arg.star:
                args.append(args_entry)
            elif arg.star == "**" and value.kind is Kind.DICT and value.keys is not None and value.elems is not None \
                    and all(isinstance(key, str) and key.isidentifier() for key in value.keys):
                # `Trainer(**built)` of a dict whose keys are known: those keywords.
                kwargs.update(zip(value.keys, value.elems))
            elif arg.star:
                kwargs[f"{arg.star}{len(kwargs)}"] = value  # `*0` unpacks positions, `**1` keywords
        for slot in slots:
            self.unhold(slot, UNKNOWN, len(self.renamed), state)
        if len(self.renamed) != start:
            # The arguments evaluated first, as the later ones left the state.
            args = [(expr, self.refresh(value, marks[id(expr)], state)) for expr, value in args]
            for arg in call.args:
                if arg.keyword is not None:
                    key = arg.keyword.value
                    kwargs[key] = self.refresh(kwargs[key], marks[id(arg.value)], state)
        return args, kwargs

    def call_value(self, call: cst.Call, callee: Value, label: str | None, args: Args,
                   kwargs: dict[str, Value], state: State, frame: Frame) -> Value:
        """Call a value: a function or class of this file, a module, or something opaque."""
        if callee.kind is Kind.INSTANCE and callee.others:
            return self.on_each_class(callee, state, lambda member, mine: self.call_value(
                call, member, label, args, kwargs, mine, frame))
        if callee.kind is Kind.FUNCTION and isinstance(callee.ref, FunctionInfo):
            return self.call_function(callee.ref, args, {**kwargs, **self.closure_of(callee)}, state, frame,
                                      callee.bound, call)
        if callee.kind is Kind.FUNCTION and callee.bound is not None and callee.qual is not None \
                and api.makes(callee.qual) is Returns.REFERENCE:
            return callee.bound
        if callee.kind is Kind.CLASS and isinstance(callee.ref, ClassInfo):
            return self.instantiate(callee.ref, args, kwargs, state, frame, call, label)
        if callee.kind is Kind.INSTANCE and isinstance(callee.ref, ClassInfo):
            method = self.method_of(callee.ref, api.FORWARD) or self.method_of(callee.ref, "__call__")
            if method is not None and callee.ref.is_module and (
                    frame.depth >= self.max_depth or any(method is f for f in self.active)):
                # A module nested in one of its own class (U-Net blocks), or too deep to follow:
                # called as a module whose code is not read, it still builds graph from its parameters.
                method = None
            if method is not None:
                self.enter_owner(label)
                frozen = self.is_frozen(("class", callee.ref.key), state) or self.is_frozen(label, state)
                self.frozen_depth += frozen
                written = self.parameters_graph(callee, label, call, state, frame)
                if written is not None:
                    # The layers its forward calls read the parameters written in place.
                    self.parameters_in_use.append(written)
                running = self.parameters_key(callee)
                if running is not None:
                    self.modules_running.append(running)
                sources = self.sources
                try:
                    result = self.call_function(method, args, kwargs, state, frame, callee, call)
                finally:
                    self.leave_owner()
                    self.frozen_depth -= frozen
                    if written is not None:
                        self.parameters_in_use.pop()
                    if running is not None:
                        self.modules_running.pop()
                if label is not None and self.sources > sources:
                    self.weighted.add(label)  # its forward called modules with parameters
                if label is not None and result.nodes:
                    result = made_by(result, label)
                return self.run_hooks(call, callee, args, result, state, frame)
        if callee.kind is Kind.MODULE and callee.qual in K.ITERATED_MODULE_CONTAINERS \
                and isinstance(callee.ref, Value) and callee.ref.kind is Kind.INSTANCE:
            # `nn.Sequential(Block(), Block())(x)`: each of its modules' forward runs (one stands for all).
            return self.call_value(call, callee.ref, label, args, kwargs, state, frame)
        if callee.kind in (Kind.MODULE, Kind.UNKNOWN) and not callee.nodes:
            owner = self._optimizer_owner(call, state, frame)
            if owner is not None:
                # A callable the analysis cannot read, given a module's parameters first
                # (`build_optimizer(net.parameters())`, `self.optimizer_class(...)`): it makes the
                # optimizer of that module (no forward takes its own parameters).
                return Value(Kind.OPTIMIZER, ref=owner, label=label)
        operands: Args = [*args, *((None, v) for v in kwargs.values())]
        for attribute in callee.writes if callee.kind is Kind.MODULE else ():
            if attribute == WRITES_INPUT:
                continue
            # Its forward writes that parameter in place first (an embedding's `max_norm` renorm).
            holder = self.holder_of(cst.Attribute(value=call.func, attr=cst.Name(attribute)), state, frame)
            if holder is not None:
                self.modified_in_place(holder, call, state, frame)
        if callee.kind is Kind.MODULE and callee.weights:
            # Its forward reads (and the legacy hooks first recompute) its computed weights.
            operands += [(None, self.module_weight(callee, label, attr, call.func, state, frame, forward=True))
                         for attr, *_ in callee.weights]
        is_module = callee.kind is Kind.MODULE or (callee.kind is Kind.INSTANCE)
        if (is_module or (callee.kind is Kind.UNKNOWN and label is not None and label in self.module_names)) \
                and callee.qual not in K.PARAMETERLESS_MODULES:
            operands += self.parameter_graphs(callee, label, call, state, frame)
        if (is_module and callee.qual in K.PARAMETERLESS_MODULES) or self.is_frozen(label, state) \
                or (is_module and self.frozen_depth > 0):
            module_fact = api.lookup(callee.qual) if callee.qual is not None else None
            if module_fact is not None:
                self.note_comparison(call, module_fact)
            keeps_result = module_fact is not None and module_fact.saves_result
            if WRITES_INPUT in callee.writes and args and args[0][0] is not None:
                # `nn.ReLU(inplace=True)(x)`: `x` itself is written, and handed back.
                return self.write_input(call, args[0][0], args[0][1], operands, keeps_result, state, frame)
            result = self.derive(call, operands, state, frame, consumer=label, keeps_result=keeps_result,
                                 saves_operands=module_fact is None or module_fact.keeps_input is not False)
            if result.nodes and callee.qual not in K.PARAMETERLESS_MODULES:
                # Frozen, given inputs with a graph: it keeps its weights for their gradients.
                self.note_saved_parameters(self.parameters_key(callee), self.site(call, frame), state)
            return result
        if callee.qual == UNSURE_MODULE and not (label is not None and label in self.module_names) \
                and all(v.kind in (Kind.SCALAR, Kind.NONE) and not v.nodes for _, v in operands):
            # An object only ever called, given nothing but numbers and shapes (`self.Tensor(x.size())`
            # with a tensor class passed in): a factory, not a module's forward.
            return self.derive(call, operands, state, frame, consumer=label)
        if is_module or (callee.kind is Kind.UNKNOWN and label is not None and label in self.module_names):
            made = api.lookup(callee.qual) if callee.kind is Kind.MODULE and callee.qual is not None else None
            # A library layer called on data (no input with a graph) whose graph then keeps only its
            # input (a Linear: the weight's gradient needs the input alone): a step changing its
            # weights leaves its backward intact.
            keeps = not ((callee.keeps_weights is False or (made is not None and made.keeps_weights is False))
                         and not callee.weights
                         and not any(v.nodes or v.grad for _, v in [*args, *((None, v) for v in kwargs.values())]))
            result = self.derive(call, operands, state, frame, source=True, consumer=label, keeps_weights=keeps,
                                 keeps_result=made is not None and made.saves_result)
            if keeps:
                self.note_saved_parameters(self.parameters_key(callee), self.site(call, frame), state)
            self.note_saved_tied(call, state, frame)
            unseen = callee.kind is Kind.INSTANCE and isinstance(callee.ref, ClassInfo) and not callee.ref.is_module
            if unseen and not (label is not None and label in self.module_names):
                # An object of a project class not known to be a module, whose `__call__` the analysis
                # cannot find (its base is in a module it did not read): maybe a transform, maybe a
                # module; the graph its call makes is as unsure as an opaque callable's.
                self.unsure.add(self.site(call, frame))
            if callee.qual == UNSURE_MODULE and not (label is not None and label in self.module_names):
                self.unsure.add(self.site(call, frame))
                tensors = [v for _, v in operands if v.kind in (Kind.TENSOR, Kind.UNKNOWN, Kind.DATA)]
                if label is not None and tensors and not any(v.nodes for v in tensors):
                    # Applied to data alone (`netD(real)`): a model, not a loss of model outputs.
                    self.weighted.add(label)
            elif label is not None:
                self.weighted.add(label)
            self.sources += 1
            result = replace(result, label=label)
            result = self.shape_recurrent(callee, result)
            return self.run_hooks(call, callee, args, result, state, frame)
        if callee.kind is Kind.UNKNOWN and not callee.nodes:
            self.forget_state_of(operands, state)
        return self.derive(call, operands, state, frame, consumer=label)

    def note_comparison(self, call: cst.Call, fact: Fact | None) -> None:
        """Remember which arguments a loss (or a difference, a ratio) compares against (`comparisons`)."""
        if fact is None or fact.reference is None:
            return
        position, keyword = fact.reference
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        if position < 0:
            self.comparisons[call] = (True, tuple(positional))
            return
        named = [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == keyword]
        self.comparisons[call] = (False, tuple(named or positional[position:position + 1]))

    def forget_opaque(self, label: str, state: State) -> None:
        """What the program kept on the unseen object `label` (and on its attributes) is not known
        any more."""
        prefix = state.opaque_key(label)[1] + "."
        self.touch_scan(OPAQUE, prefix)
        for key in [k for k in state.heap if k[0] == OPAQUE and k[1].startswith(prefix)]:
            del state.heap[key]
            state.hdefs.pop(key, None)

    def forget_state_of(self, operands: Args, state: State) -> None:
        """A callable the analysis cannot see (no fact, no source) may change any object it is given:
        the graphs that a project object passed to it, and the modules under it, hold in their
        attributes are no longer known (`functional.reset_net(self)` resets a spiking network's state)."""
        for expr, value in operands:
            label = dotted(expr) if expr is not None else None
            if label is not None and opaque_object(value):
                self.forget_opaque(label, state)
            if value.kind is not Kind.INSTANCE or not isinstance(value.ref, ClassInfo):
                continue
            owners = {heap_owner(v) for v in self.submodules_of(value, state, deep=True).elems or ()
                      if v.kind is Kind.INSTANCE and isinstance(v.ref, ClassInfo)}
            for owner in owners:
                self.touch_owner(owner)
            for key, held in list(state.heap.items()):
                if key[0] in owners and held.nodes and held.kind not in (Kind.INSTANCE, Kind.MODULE):
                    state.heap[key] = UNKNOWN  # type: ignore[index]

    def submodules_of(self, instance: Value, state: State, deep: bool) -> Value:
        """`net.modules()` (the instance and every module below it) or `net.children()` (the
        modules it holds) of an instance of a project class: a tuple of those objects, as the
        attributes of this state hold them."""
        found: list[Value] = [instance] if deep else []
        seen = {heap_owner(instance)}
        pending = [instance]
        while pending:
            owner = pending.pop(0)
            self.touch_owner(heap_owner(owner))
            for (key, _), value in list(state.heap.items()):
                if key != heap_owner(owner) or value.kind not in (Kind.INSTANCE, Kind.MODULE):
                    continue
                if value.kind is Kind.INSTANCE and isinstance(value.ref, ClassInfo):
                    if heap_owner(value) in seen:
                        continue
                    seen.add(heap_owner(value))
                    if deep:
                        pending.append(value)
                found.append(value)
                member = value.ref if value.kind is Kind.MODULE else None
                if deep and isinstance(member, Value) and member.kind is Kind.INSTANCE \
                        and isinstance(member.ref, ClassInfo) and heap_owner(member) not in seen:
                    # `nn.Sequential(LIF(), Dropout())`: the project module its calls run is below it.
                    seen.add(heap_owner(member))
                    pending.append(member)
                    found.append(member)
            if len(found) > 4 * MAX_UNROLLED:
                break
        return Value(Kind.TUPLE, elems=tuple(found))

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

    def closure_of(self, function: Value) -> dict[str, Value]:
        """The variables a nested function captured, passed to its call when the function that
        defined it is no longer running (while it runs, the closure reads its frame as it is now)."""
        info = function.ref
        if not function.captured or not isinstance(info, FunctionInfo) \
                or any(active is info.parent for active in self.active):
            return {}
        return {CAPTURED + name: value for name, value in function.captured}

    def run_hooks(self, call: cst.Call, module: Value, args: Args, output: Value, state: State,
                  frame: Frame) -> Value:
        """Forward hooks registered on modules see every module call's output."""
        facts = api.forward_hooks()
        if self.recorders:
            self.touch(*((HOOKS, fact.name) for fact in facts))
        registered = [(fact, hooks) for fact in facts
                      if (hooks := state.heap.get((HOOKS, fact.name))) is not None and hooks.elems is not None]
        if not registered:
            return output
        # What a hook is called with, by the names its fact gives them.
        seen = {"module": module, "input": self.container_of(Kind.TUPLE, [v for _, v in args]), "output": output}
        for fact, hooks in registered:
            if fact.calls is None or hooks.elems is None:
                continue
            passed = [(None, seen.get(part, UNKNOWN)) for part in fact.calls.passes]
            for hook in hooks.elems:
                if hook.kind is Kind.FUNCTION and isinstance(hook.ref, FunctionInfo):
                    self.call_function(hook.ref, passed, self.closure_of(hook), state, frame, hook.bound, call)
                elif hook.kind is Kind.INSTANCE and isinstance(hook.ref, ClassInfo):
                    # An object of the project's own class, called (`self.store` with a `__call__`).
                    method = self.method_of(hook.ref, "__call__")
                    if method is not None:
                        self.call_function(method, passed, {}, state, frame, hook, call)
        return output

    def base_method(self, proxy: cst.BaseExpression, method: str, state: State,
                    frame: Frame) -> tuple[FunctionInfo, Value] | None:
        """For `super().method` (or `super(Cls, self).method`) in a method of a project class: the
        method as the first of the classes after it defines it, and the object it runs on; None when
        no project base class defines it (a library base's method is taken as before)."""
        if not isinstance(proxy, cst.Call):
            return None
        name = self.qualified(proxy.func, state, frame)
        fact = api.lookup(name) if name is not None else None
        if fact is None or not fact.proxies_bases or frame.self_value is None or frame.function is None:
            return None
        owner = frame.function.owner
        if len(proxy.args) == 2:
            named = self.peek(proxy.args[0].value, state, frame)
            owner = named.ref if named is not None and isinstance(named.ref, ClassInfo) else None
        if owner is None:
            return None
        for base in self.bases_of(owner):
            found = self.method_of(base, method)
            if found is not None:
                return found, frame.self_value
        return None

    def known_string(self, expr: cst.BaseExpression, state: State, frame: Frame) -> str | None:
        """The string an expression holds when the program says it plainly: a literal, or an option
        of a parsed command line declared with a plain string default (`FLAGS.model`)."""
        if isinstance(expr, cst.SimpleString):
            value = expr.evaluated_value
            return value if isinstance(value, str) else None
        if isinstance(expr, cst.Attribute):
            parsed = self.peek(expr.value, state, frame)
            fact = api.lookup(parsed.qual) if parsed is not None and parsed.qual is not None else None
            if fact is not None and fact.holds_options:
                return self.option_defaults.get(expr.attr.value)
        return None

    def eval_known_call(self, call: cst.Call, name: str, state: State, frame: Frame) -> Value:
        """A call of an imported callable, known by its qualified name."""
        args, kwargs = self.eval_args(call, state, frame)
        drawn = api.lookup(name)
        if drawn is not None and drawn.draws:
            self.note_draw(frame)
        if drawn is not None and drawn.picks and call.args:
            self.picked.add(call.args[0].value)
        if drawn is not None and drawn.declares_option:
            dest, default = option_dest(call), _string_keyword(call, "default")
            if dest is not None:
                self.option_defaults[dest] = default if self.option_defaults.get(dest, default) == default else None
            declared = option_values(call)
            if declared is not None:
                stored, values = declared
                # Declared twice (two parsers, one per mode): one of either's values.
                known = self.option_domains.get(stored, frozenset())
                self.option_domains[stored] = None if known is None else known | values
            else:
                stored = option_dest(call)
                if stored is not None:
                    # Declared again without choices (another parser's option of the same name): any value.
                    self.option_domains[stored] = None
            return NONE
        if drawn is not None and drawn.imports_named and call.args:
            # `importlib.import_module(FLAGS.model)`: the project module the name says (an option's
            # default, the program as it runs unless told otherwise).
            named = self.known_string(call.args[0].value, state, frame)
            module = self.project_value(named, frame.module) if named is not None else None
            if module is not None:
                return module
        if name in K.BACKWARD_FUNCTIONS:
            roots = args[:1] or [(None, next((kwargs[k] for k in ROOT_KEYWORDS if k in kwargs), UNKNOWN))]
            self.backward(call, roots, kwargs, state, frame, positional_retain=None)
            return NONE
        if name in K.GRAD_FUNCTIONS:
            return self.grad(call, args, kwargs, state, frame)
        if (name in K.CUT_FUNCTIONS and _probed_form(call, name)) or name in K.NO_GRAD or name in K.ENABLE_GRAD:
            return SCALAR
        if name in K.FACTORIES:
            requires = kwargs.get("requires_grad")
            flag = self._literal_kwarg(call, "requires_grad")
            return Value(Kind.TENSOR, grad=bool(requires is not None and flag is not False))
        if name in K.PARAMETER_TYPES:
            # `nn.Parameter(t, requires_grad=False)` (PopArt's running statistics) requires no grad.
            position, keyword = PARAMETER_REQUIRES_GRAD
            given = next((arg.value for arg in call.args
                          if arg.keyword is not None and arg.keyword.value == keyword), None)
            if given is None and len(call.args) > position and call.args[position].keyword is None \
                    and not call.args[position].star:
                given = call.args[position].value
            return Value(Kind.TENSOR, grad=not (isinstance(given, cst.Name) and given.value == "False"))
        fact = api.lookup(name)
        if fact is None and api.family_of(name) is None:
            owner = self._optimizer_owner(call, state, frame)
            if owner is not None:
                # A library function no fact describes, given a module's parameters first
                # (`build_optimizer(net.parameters())`): it makes that module's optimizer.
                self.optimizer_owners.update(owners_in(owner))
                return Value(Kind.OPTIMIZER, ref=owner, label=dotted(call.func))
        if fact is not None and fact.computes is not None and args:
            return self.with_computed_weight(call, fact.computes, args, kwargs, state)
        if fact is not None and fact.returns is Returns.ITEM and fact.receiver is None and args:
            # `next(it)`: an item of what it iterates, as a `for` over it would bind.
            return self.element_from(args[0][0], args[0][1], state, frame) if args[0][0] is not None \
                else self.element_of(args[0][1])
        if fact is not None and fact.iterator and len(args) == 1 and not kwargs \
                and args[0][1].kind in (Kind.LIST, Kind.TUPLE, Kind.DICT, Kind.MODULE, Kind.INSTANCE):
            # `iter(self.blocks)`: what `next()` takes from it are the container's items.
            return args[0][1]
        if name in K.DATA_FUNCTIONS:
            fact = api.lookup(name)
            operands_: Args = [*args, *((None, v) for v in kwargs.values())]
            # A dataset stores what it is given; `iter(loader)` hands out what the loader holds.
            stored = operands_ if fact is not None and fact.stores else [(e, v) for e, v in operands_
                                                                         if v.kind is Kind.DATA]
            data = data_with([v for _, v in stored])
            return replace(data, via=tuple(self.reads_of(stored, state, frame, None))) if data.nodes else data
        collects = fact.collects if fact is not None else None
        starred = [v for key, v in kwargs.items() if key.startswith("*")]
        if collects is Collects.ZIP and not args and len(starred) == 1:
            # `zip(*batch)`: the items of `batch` transposed, one container per position of an item.
            item = self.element_of(starred[0])
            if item.kind is Kind.TUPLE and item.elems:
                return Value(Kind.TUPLE, item.nodes, item.top, item.grad,
                             elems=tuple(self.container_of(Kind.TUPLE, [e], exact=False) for e in item.elems))
            # Positions not known: every one a tuple of what the items hold (`ref`, see `assign`).
            column = self.container_of(Kind.TUPLE, [replace(item, element=False)], exact=False)
            return Value(Kind.TUPLE, item.nodes, item.top, item.grad, ref=column)
        if collects is Collects.DICT and not args and not kwargs:
            return self.container_of(Kind.DICT, [])
        if collects is Collects.DICT and not args and kwargs and not starred:
            values = list(kwargs.values())
            return replace(self.container_of(Kind.DICT, values), elems=tuple(values), keys=tuple(kwargs))
        if collects is not None:
            values = [v for _, v in args]
            if values and all(v.kind is Kind.DATA for v in values):
                data = data_with(values)
                return replace(data, via=tuple(self.reads_of(args, state, frame, None))) if data.nodes else data
            via = tuple(self.reads_of(args, state, frame, None))
            paired = collects in (Collects.ZIP, Collects.ENUMERATE)
            elements = [self.element_of(v) for v in values] if paired else []
            # Each position's item is carried over by its own iterable (`policy.saved_log_probs`).
            elements = [replace(e, via=tuple(self.reads_of([arg], state, frame, None))) if e.nodes and not e.via else e
                        for e, arg in zip(elements, args, strict=False)]
            if elements:
                # `enumerate(self.layers)`, `zip(logprobs, old_logprobs)`: each item a tuple of what
                # the iterables hold, position by position (modules kept).
                item = Value(Kind.TUPLE, elems=(SCALAR, *elements) if collects is Collects.ENUMERATE else tuple(elements))
                merged = self.container_of(Kind.LIST, elements)
                return replace(merged, ref=item, via=via or merged.via)
            if collects in (Collects.LIST, Collects.TUPLE) and values and values[0].kind in (Kind.LIST, Kind.TUPLE):
                merged = replace(values[0], kind=Kind.LIST if collects is Collects.LIST else Kind.TUPLE)
            else:
                merged = self.container_of(Kind.LIST, [self.element_of(v) if paired else v for v in values])
            return replace(merged, via=via or merged.via)
        if name in K.MODULE_WRAPPERS:
            return args[0][1] if args else UNKNOWN
        if fact is not None and fact.returns is Returns.ARGUMENTS and fact.hands_back:
            # `engine, optimizer, _, _ = deepspeed.initialize(model=model, ...)`: what was given, wrapped.
            return Value(Kind.TUPLE, elems=tuple(kwargs.get(keyword, UNKNOWN) for keyword in fact.hands_back))
        family = api.family_of(name)
        makes = fact.returns if fact is not None else family.returns if family is not None else None
        if makes is Returns.REFERENCE:
            return Value(Kind.FUNCTION, qual=name, bound=args[0][1] if args else UNKNOWN, label=dotted(call.func))
        if makes is Returns.OBJECT:
            # A library object whose methods have facts of their own (`random.Random(seed)`).
            made = fact.instance if fact is not None and fact.instance is not None else name
            return Value(Kind.UNKNOWN, qual=made, label=dotted(call.func))
        if makes is Returns.OPTIMIZER:
            owner = self._optimizer_owner(call, state, frame)
            if owner is not None:
                self.optimizer_owners.update(owners_in(owner))
            return Value(Kind.OPTIMIZER, ref=owner, qual=name)
        if name in K.MODULE_CONTAINERS:
            # The modules given, one by one or unpacked from a list (`Sequential(*[Block(d) for ...])`).
            given = [v for _, v in args] + [v for key, v in kwargs.items() if key.startswith("*")]
            members = [self.member_of(v) for v in given]
            instances = [m for m in members if m is not None]
            member = instances[0] if instances and len(instances) == len(members) else None
            return Value(Kind.MODULE, qual=name, label=dotted(call.func), ref=member,
                         alloc=self.allocation(call, frame), keeps_weights=_layers_keep_weights(given))
        if makes is Returns.MODULE:
            written = fact.writes if fact is not None else None
            writes = (written.target,) if written is not None and isinstance(written.target, str) \
                and _given(call, written.when) else ()
            if fact is not None and fact.inplace_position is not None \
                    and _literal_true(call, INPLACE, fact.inplace_position):
                writes += (WRITES_INPUT,)
            return Value(Kind.MODULE, qual=name, label=dotted(call.func), alloc=self.allocation(call, frame),
                         writes=writes)
        if makes is Returns.COPY:
            return self.copy_of(args[0][1] if args else UNKNOWN, call, state, frame)
        if makes is Returns.DISTRIBUTION:
            operands: Args = [*args, *((None, v) for v in kwargs.values())]
            result = self.derive(call, operands, state, frame)
            return replace(result, qual=name, kind=Kind.UNKNOWN)
        operands = [*args, *((None, v) for v in kwargs.values())]
        if fact is not None and fact.writes is not None and _given(call, fact.writes.when):
            # `F.embedding(ids, weight, max_norm=1.0)` first renormalises rows of `weight` in place.
            written = _argument(call, fact.writes.target, fact.writes.keyword)
            holder = self.holder_of(viewed_base(written), state, frame) if written is not None else None
            if holder is not None:
                self.modified_in_place(holder, call, state, frame)
        if "." in name and name.split(".", 1)[0] not in K.KNOWN_PACKAGES:  # not a builtin either
            self.forget_state_of(operands, state)
        # What a function the facts know reads, no model consumes (a fake batch into `torch.cat`).
        self.note_comparison(call, fact)
        if fact is not None and fact.inplace_option and args and args[0][0] is not None \
                and _literal_true(call, INPLACE, None):
            # `F.relu(x, inplace=True)`: `x` itself is written, and handed back.
            return self.write_input(call, args[0][0], args[0][1], operands,
                                    api.keeps_its_result(name, [False]), state, frame)
        result = self.derive(call, operands, state, frame, consumer=dotted(call.func),
                             keeps_result=api.keeps_its_result(name, _numbers_given(call)))
        if any(declared.startswith(name + ".") for declared in self.declared):
            # An instance of a class whose methods the project declares (`engine.Engine()`).
            result = replace(result, qual=name)
        return result

    def with_computed_weight(self, call: cst.Call, when: Computes, args: Args, kwargs: dict[str, Value],
                             state: State) -> Value:
        """`weight_norm(module)`, `register_parametrization(module, "weight", P())`: the module,
        whose attribute is computed from its parameters from now on (see `module_weight`)."""
        module = args[0][1]
        if module.kind is not Kind.MODULE:
            return module
        name = parametrize.DEFAULT_ATTRIBUTE
        named = [a.value for a in call.args[1:2] if a.keyword is None] + \
            [a.value for a in call.args if a.keyword is not None and a.keyword.value in parametrize.NAME_KEYWORDS]
        if named and isinstance(named[0], cst.SimpleString):
            name = str(named[0].evaluated_value)
        parametrization = next((v for _, v in args[2:] if v.kind in (Kind.INSTANCE, Kind.MODULE)),
                               next((v for v in kwargs.values() if v.kind in (Kind.INSTANCE, Kind.MODULE)), None))
        kept = tuple(w for w in module.weights if w[0] != name)
        made = (name, when, parametrization, self.site(call))
        updated = replace(module, weights=kept if when is Computes.REMOVED else (*kept, made))
        state.replace_everywhere(module, updated)  # registered in place on the module
        return updated

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

    def freeze(self, value: Value, label: str | None, state: State | None = None,
               frame: Frame | None = None) -> None:
        """`requires_grad_(False)` on a module or on each of its parameters: calls of that module
        build no graph of their own any more."""
        for target in self._freezing_targets(value, label, state, frame):
            if isinstance(target, tuple):
                self.frozen_classes.add(target[1])  # type: ignore[arg-type]
            else:
                self.frozen.add(target)
            if state is not None:
                state.frozen = state.frozen | {target}

    def unfreeze(self, value: Value, label: str | None, state: State, frame: Frame) -> None:
        """`requires_grad_(True)` / `p.requires_grad = True` on what `freeze` would freeze: from here
        on (on this path) its calls build graph again (GAN code toggles the critic each step)."""
        targets = set(self._freezing_targets(value, label, state, frame))
        self.unfrozen |= targets
        state.frozen = state.frozen - targets

    def is_frozen(self, target: object, state: State) -> bool:
        """Whether a module (label, or ("class", key)) is frozen here: frozen anywhere for one the
        program never unfreezes (a frozen VAE set up in another method), else as this path left it."""
        if target is None:
            return False
        known = self.frozen_classes if isinstance(target, tuple) else self.frozen
        key = target[1] if isinstance(target, tuple) else target
        if key not in known:
            return False
        return target not in self.unfrozen or target in state.frozen

    def parameters_list(self, module: Value, label: str | None, state: State) -> Value:
        """`module.parameters()`: leaves that require grad unless frozen, holding what in-place writes
        outside no_grad gave them (an EMA teacher's weights after a first update with grad)."""
        key = self.parameters_key(module)
        written = state.heap.get(key) if key is not None else None  # type: ignore[call-overload]
        if key is not None:
            self.touch(key)
        nodes, top = (written.nodes, written.top) if written is not None else (frozenset(), frozenset())
        return Value(Kind.LIST, nodes, top, grad=not self.parameters_frozen(module, state),
                     label=f"params:{label}" if label else None, parameters_of=module)

    def parameters_listed(self, module: Value, label: str | None, state: State, fact: Fact) -> Value:
        """What a module method listing its parameters gives: `parameters_list`, or with `named`
        (`named_parameters()`) (name, parameter) pairs, the name no graph and no leaf."""
        listed = self.parameters_list(module, label, state)
        return replace(listed, item_shape=(False, True)) if fact.named else listed

    def parameters_frozen(self, module: Value, state: State) -> bool:
        """Whether the parameters of this very module (an EMA teacher frozen after its copy) are frozen."""
        key = self.parameters_key(module)
        return key is not None and self.is_frozen(_parameters_target(key), state)

    def _freezing_targets(self, value: Value, label: str | None, state: State | None,
                          frame: Frame | None) -> list[object]:
        module = value.parameters_of or (value if value.kind in (Kind.MODULE, Kind.INSTANCE) else None)
        key = self.parameters_key(module) if module is not None else None
        own = [_parameters_target(key)] if key is not None else []
        return self._labels_frozen(value, label, state, frame) + own

    def _labels_frozen(self, value: Value, label: str | None, state: State | None,
                       frame: Frame | None) -> list[object]:
        if value.label and value.label.startswith("params:"):
            owner = value.label.removeprefix("params:")
            targets: list[object] = [owner]
            # `for p in self.parameters(): p.requires_grad = False` freezes every instance's calls.
            held = self.lookup(owner, state, frame) if state is not None and frame is not None \
                and "." not in owner else None
            if held is not None and held.kind is Kind.INSTANCE and isinstance(held.ref, ClassInfo):
                targets.append(("class", held.ref.key))
            return targets
        if label is not None and (value.kind in (Kind.MODULE, Kind.INSTANCE) or label in self.module_names):
            return [label]
        return []

    @staticmethod
    def _called_back(fact: Fact, args: Args, kwargs: dict[str, Value]) -> Value | None:
        """The argument a call calls back (`step(closure)`, `register_forward_hook(hook)`), if passed."""
        if fact.calls is None:
            return None
        where = fact.calls.argument
        if isinstance(where, int):
            if len(args) > where:
                return args[where][1]
            return kwargs.get(fact.calls.keyword) if fact.calls.keyword else None
        return kwargs.get(where)

    def _keeps_module(self, method: str, receiver: Value, label: str | None) -> Value | None:
        """What a module's or an optimizer's bookkeeping method (`to`, `train`, `zero_grad`) returns
        when the receiver is one: the receiver itself, or None."""
        if not (receiver.kind in (Kind.MODULE, Kind.OPTIMIZER, Kind.INSTANCE) or label in self.module_names):
            return None
        if self._module_returns(method) is Returns.RECEIVER:
            return receiver
        optimizer = api.method(method, Receiver.OPTIMIZER)
        if optimizer is not None and optimizer.returns is Returns.NONE and optimizer.stores is None:
            return receiver
        return None

    def _literal_kwarg(self, call: cst.Call, keyword: str) -> bool | None:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == keyword:
                if isinstance(arg.value, cst.Name) and arg.value.value in ("True", "False"):
                    return arg.value.value == "True"
                return None
        return False

    def _optimizer_owner(self, call: cst.Call, state: State | None = None, frame: Frame | None = None) -> str | None:
        """`Adam(netD.parameters())` is owned by `netD`; the other names that hold the same module
        then (`self.qf1` after `self.qf1 = qf1`) name it too (`owner_aliases`). An optimizer of the
        parameters of several modules (`Adam(list(enc.parameters()) + list(dec.parameters()))`) is
        owned by each (`owner_group`)."""
        if not call.args:
            return None
        found = self._parameter_calls(call.args[0].value, state, frame)
        if not found:
            return None
        owners: list[str] = []
        for receiver in found:
            owner = indexed(receiver)
            if owner is None:
                return None
            owners.append(owner)
            if state is not None and frame is not None:
                held = self.peek(receiver, state, frame)
                if held is not None and held.kind in (Kind.INSTANCE, Kind.MODULE):
                    self.owner_objects[owner] = held
                    aliases = self.holders_of(held, state, frame) - {owner}
                    if aliases:
                        self.owner_aliases[owner] = self.owner_aliases.get(owner, frozenset()) | aliases
        return owner_group(owners)

    def _parameter_calls(self, expr: cst.BaseExpression, state: State | None,
                         frame: Frame | None) -> list[cst.BaseExpression] | None:
        """The receivers of the `.parameters()` calls an optimizer's parameters are made of, when
        they are made of nothing else: the call itself, lists and tuples of them (starred or
        added), what a collecting builtin makes of them (`list(...)`), a comprehension over them."""
        if isinstance(expr, cst.Call):
            if isinstance(expr.func, cst.Attribute):
                if self._module_returns(expr.func.attr.value) is Returns.PARAMETERS:
                    return [expr.func.value]
                return None
            name = self.qualified(expr.func, state, frame) if state is not None and frame is not None else None
            fact = api.lookup(name) if name is not None else None
            if fact is None or fact.collects not in (Collects.LIST, Collects.TUPLE, Collects.ITEMS) \
                    or not expr.args or any(a.keyword is not None for a in expr.args):
                return None
            parts = [a.value for a in expr.args]
        elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            parts = [expr.left, expr.right]
        elif isinstance(expr, (cst.List, cst.Tuple)) and expr.elements:
            parts = [e.value for e in expr.elements]
        elif isinstance(expr, (cst.ListComp, cst.GeneratorExp)) and expr.for_in.inner_for_in is None:
            parts = [expr.for_in.iter]
        else:
            return None
        found: list[cst.BaseExpression] = []
        for part in parts:
            inner = self._parameter_calls(part, state, frame)
            if not inner:
                return None
            found.extend(inner)
        return found

    def holders_of(self, value: Value, state: State, frame: Frame) -> frozenset[str]:
        """The local names and `self` attributes holding this very object now."""
        found = {name for name, held in state.frames[-1].items() if held is value}
        me = frame.self_value
        if me is not None and isinstance(me.ref, ClassInfo):
            self.touch_owner(heap_owner(me))
            found |= {f"self.{attr}" for (key, attr), held in state.heap.items()
                      if key == heap_owner(me) and held is value}
        return frozenset(found)

    @staticmethod
    def _module_returns(method: str) -> Returns | None:
        fact = api.method(method, Receiver.MODULE)
        return fact.returns if fact is not None else None

    def _set_requires_grad(self, call: cst.Call, receiver: Value, label: str | None, state: State,
                           frame: Frame) -> bool | None:
        """`requires_grad_(flag)`: freezes or unfreezes what the receiver holds; the flag, when literal."""
        wanted = self._literal_positional(call, default=True)
        if wanted is False:
            self.freeze(receiver, label, state, frame)
        elif wanted is True:
            self.unfreeze(receiver, label, state, frame)
        return wanted

    def eval_method_call(self, call: cst.Call, func: cst.Attribute, state: State, frame: Frame) -> Value:
        method = func.attr.value
        name = self.qualified(func, state, frame)
        if name is not None:
            return self.eval_known_call(call, name, state, frame)
        inherited = self.base_method(func.value, method, state, frame)
        if inherited is not None:
            # `super().__init__(layers)`: the base class's method, run on the same object.
            info, me = inherited
            args, kwargs = self.eval_args(call, state, frame)
            return self.call_function(info, args, kwargs, state, frame, me, call)
        receiver = self.eval(func.value, state, frame)
        if receiver.kind is Kind.INSTANCE and receiver.others:
            # An object of one of several classes: the method of each, on a copy of the state, joined.
            return self.on_each_class(receiver, state, lambda member, mine: self.method_call_on(
                call, func, member, mine, frame), method)
        return self.method_call_on(call, func, receiver, state, frame)

    def on_each_class(self, receiver: Value, state: State, run: Callable[[Value, State], Value],
                      method: str | None = None) -> Value:
        """What `run` gives for each class an object may be of, each on its own copy of the state,
        the copies joined back into `state`. A class all of whose code is seen and that has no
        `method` is not what the object is where the program calls it (an AttributeError first)."""
        states: list[State] = []
        results: list[Value] = []
        for member in members(receiver):
            mine = state.copy()
            if method is not None and self.lacks(member.ref, method):
                mine.dead = True
                states.append(mine)
                continue
            result = run(member, mine)
            states.append(mine)
            if not mine.dead:
                results.append(result)
        joined = State.join_all(states)
        if joined is None:
            state.dead = True
            return UNKNOWN
        self.adopt(state, joined)
        value: Value | None = None
        for result in results:
            value = join(value, result)
        return value if value is not None else UNKNOWN

    def lacks(self, info: ClassInfo, name: str) -> bool:
        """Whether objects of a project class surely have no attribute `name`: neither it nor a base
        defines or assigns it, every base is seen, and it is no module (whose library methods are many)."""
        return not info.is_module and not self.unseen_base(info) and self.method_of(info, name) is None \
            and name not in self.assigned_attributes(info) and not any(
                name in _class_level_names(c.node) for c in self.class_and_bases(info))

    def method_call_on(self, call: cst.Call, func: cst.Attribute, receiver: Value, state: State,
                       frame: Frame) -> Value:
        """`receiver.method(...)` for a receiver already evaluated (`eval_method_call`)."""
        method = func.attr.value
        if receiver.kind is Kind.UNKNOWN and receiver.qual is not None \
                and api.makes(receiver.qual) in (None, Returns.OBJECT) \
                and api.lookup(f"{receiver.qual}.{method}") is not None:
            # A method of a library object made by a call the facts know (`self.rng.sample(...)` of
            # a `random.Random`): the fact of `Class.method`.
            return self.eval_known_call(call, f"{receiver.qual}.{method}", state, frame)
        read_at = len(self.renamed)
        label = dotted(func.value)
        if receiver.kind in (Kind.TENSOR, Kind.UNKNOWN):
            drawn = api.method(method, Receiver.TENSOR, Receiver.DISTRIBUTION)
            if drawn is not None and drawn.draws:
                self.note_draw(frame)
        if label is not None and method not in K.MODULE_METHODS and opaque_object(receiver):
            # A method of an object whose class is not seen (`memory.clear()`): it may change
            # whatever the program kept on that object.
            self.forget_opaque(label, state)
        if isinstance(receiver.ref, ModuleInfo):
            # `models.Net(...)`: a class or function of a project module.
            callee = self.attribute_value(receiver, func, state, frame)
            args, kwargs = self.eval_args(call, state, frame)
            return self.call_value(call, callee, dotted(func), args, kwargs, state, frame)
        own = self.method_of(receiver.ref, method) if isinstance(receiver.ref, ClassInfo) else None
        if own is None and isinstance(receiver.ref, ClassInfo) and method in receiver.ref.joins:
            # `Spike.apply(v)` of a custom autograd.Function: one node over the arguments' graphs.
            args, kwargs = self.eval_args(call, state, frame)
            return self.derive(call, [*args, *((None, v) for v in kwargs.values())], state, frame)
        if own is None and receiver.kind is Kind.INSTANCE and isinstance(receiver.ref, ClassInfo):
            held = self.attribute_of(receiver, method, state)
            if held is not None and is_api_reference(held):
                # `self.optimizer_class(params)`: the library class the attribute was given.
                return self.eval_known_call(call, held.qual, state, frame)  # type: ignore[arg-type]
        if receiver.kind in (Kind.INSTANCE, Kind.MODULE) and method in K.MODULE_RETURNS_SELF and own is None:
            args, _ = self.eval_args(call, state, frame)
            fact = api.method(method, Receiver.MODULE)
            if fact is not None and fact.sets_requires_grad:
                self._set_requires_grad(call, receiver, label, state, frame)
            if fact is not None and fact.training is not None and receiver.kind is Kind.INSTANCE:
                mode = self._literal_positional(call, default=True) if fact.training else False
                if mode is not None:
                    self.set_training(receiver, mode, state)
            return receiver
        if method in K.SUBMODULE_METHODS and own is None and receiver.kind is Kind.INSTANCE \
                and isinstance(receiver.ref, ClassInfo):
            self.eval_args(call, state, frame)
            found = self.submodules_of(receiver, state, deep=method in K.ALL_SUBMODULE_METHODS)
            if method in K.NAMED_SUBMODULE_METHODS:
                # `named_children()`: (name, module) pairs, each module kept.
                return replace(found, elems=tuple(Value(Kind.TUPLE, elems=(SCALAR, m)) for m in found.elems or ()))
            return found
        if receiver.kind is Kind.CLASS and isinstance(receiver.ref, ClassInfo):
            info = self.method_of(receiver.ref, method)
            if info is not None:
                # `States.from_batch_shape(shape)`: a class method gets the class; any other is
                # given its object (or nothing) among the arguments.
                args, kwargs = self.eval_args(call, state, frame)
                return self.call_function(info, args, kwargs, state, frame,
                                          receiver if info.binds == "class" else None, call)
        if receiver.kind is Kind.INSTANCE and isinstance(receiver.ref, ClassInfo):
            info = self.method_of(receiver.ref, method)
            if info is not None:
                args, kwargs = self.eval_args(call, state, frame)
                bound = Value(Kind.CLASS, ref=receiver.ref) if info.binds == "class" \
                    else None if info.binds == "static" else receiver
                self.enter_owner(label)
                try:
                    result = self.call_function(info, args, kwargs, state, frame, bound, call)
                finally:
                    self.leave_owner()
                if receiver.ref.is_optimizer and any(update in method for update in api.weight_updates()):
                    # An optimizer of this file (SAM's first_step/second_step) updates weights.
                    self.optimizer_step(receiver, label, state)
                return result
            module_fact = api.method(method, Receiver.MODULE)
            if module_fact is not None and module_fact.returns in (Returns.PARAMETERS, Returns.BUFFERS) \
                    and module_fact.evidence:
                self.eval_args(call, state, frame)
                parameters = module_fact.returns is Returns.PARAMETERS
                if not parameters:
                    return Value(Kind.LIST)
                return self.parameters_listed(receiver, label, state, module_fact)
            if module_fact is not None and module_fact.registers is not None and call.args:
                args, _ = self.eval_args(call, state, frame)
                name_node = call.args[0].value
                if isinstance(name_node, cst.SimpleString) and len(args) > 1:
                    stored = (cut(args[1][1]) if module_fact.registers is Returns.BUFFERS
                              else Value(Kind.TENSOR, grad=True))
                    if stored.kind is Kind.UNKNOWN:
                        stored = Value(Kind.TENSOR)  # a buffer is a tensor, whatever made it
                    key = (heap_owner(receiver), name_node.evaluated_value)
                    self.touch(key)
                    state.heap[key] = stored
                    statement = self.statement(frame)
                    if statement is not None:
                        state.hdefs[key] = frozenset({statement})
                return NONE
            # A method its class does not define that the facts say runs a backward from its argument:
            # Lightning's `self.manual_backward(loss)`, a DeepSpeed engine's `engine.backward(loss)`.
            own_backward = api.method(method, *(r for r in Receiver if r is not Receiver.TENSOR))
            if own_backward is not None and own_backward.backward is not None and own_backward.root is Role.ARGUMENT:
                args, kwargs = self.eval_args(call, state, frame)
                self.backward(call, args[:1], kwargs, state, frame, positional_retain=None)
                return NONE
        if receiver.kind is Kind.INSTANCE and isinstance(receiver.ref, ClassInfo):
            stored = self.attribute_of(receiver, method, state)
            attribute = self.attribute_value(receiver, func, state, frame)
            if stored is not None and stored is not UNKNOWN:
                attribute = stored
            if attribute.kind in (Kind.FUNCTION, Kind.MODULE, Kind.INSTANCE, Kind.CLASS) or (
                    attribute.kind is Kind.TENSOR and attribute.grad and stored is None):
                args, kwargs = self.eval_args(call, state, frame)
                if attribute.kind is Kind.TENSOR:
                    attribute = Value(Kind.MODULE, label=dotted(func))
                return self.call_value(call, attribute, dotted(func), args, kwargs, state, frame)
        if method in api.backward_methods() and _may_hand_a_loss(method, call):
            args, kwargs = self.eval_args(call, state, frame)
            if receiver.nodes or receiver.grad or not args:
                self.backward(call, [(func.value, receiver)], kwargs, state, frame,
                              positional_retain=args[1][1] if len(args) > 1 else None,
                              positional_exprs=[a for a, _ in args])
            else:
                self.backward(call, args[:1], kwargs, state, frame, positional_retain=None)
            return NONE
        if method in K.FRESH_METHODS:
            self.eval_args(call, state, frame)
            return FRESH
        if method in K.CUT_METHODS:
            self.eval_args(call, state, frame)
            if receiver.kind is Kind.DATA:
                return DATA
            return SCALAR if method in K.VALUE_METHODS else cut(receiver)
        if method in K.INPLACE_CUT_METHODS:
            self.eval_args(call, state, frame)
            tensor_fact = api.method(method, Receiver.TENSOR)
            if tensor_fact is not None and tensor_fact.sets_requires_grad:
                if self._set_requires_grad(call, receiver, label, state, frame) is False:
                    return receiver
                updated = replace(receiver, grad=True)
            else:
                updated = cut(receiver)
            state.replace_everywhere(receiver, updated)
            return updated
        of_modules = api.method(method, Receiver.MODULE)
        if of_modules is not None and of_modules.container and receiver.kind is Kind.MODULE \
                and receiver.qual in K.MODULE_CONTAINERS:
            # `heads.values()` / `heads.items()` of a ModuleDict: its modules (with their keys).
            self.eval_args(call, state, frame)
            module = receiver.ref if isinstance(receiver.ref, Value) else Value(Kind.MODULE, label=f"{label}[]")
            if of_modules.returns is Returns.MODULE:
                listed = next(iter(K.ITERATED_MODULE_CONTAINERS))
                return Value(Kind.MODULE, qual=listed, label=label, ref=receiver.ref)
            return Value(Kind.LIST, ref=Value(Kind.TUPLE, elems=(SCALAR, module)), label=label)
        held = api.method(method, Receiver.CONTAINER)
        if held is not None and held.stores is not None:
            args, kwargs = self.eval_args(call, state, frame)
            receiver = self.refresh(receiver, read_at, state)
            item = (args[0][1] if held.stores is not Role.LAST else args[-1][1]) if args else UNKNOWN
            if held.stores is Role.ITEMS and item.kind in (Kind.LIST, Kind.TUPLE):
                item = replace(item, kind=Kind.UNKNOWN, elems=None)
            if receiver.kind in (Kind.LIST, Kind.DICT) or (
                    receiver.kind is Kind.UNKNOWN and not receiver.grad and not receiver.nodes):
                updated = self.container_add(receiver, item)
                statement = self.statement(frame)
                if statement is not None:
                    self.store_in_place(func.value, updated, state, frame, statement)
                    # Other names of the same list (a parameter, a global a hook appends to) see it.
                    state.replace_everywhere(receiver, updated)
                    if args:
                        self.note_accumulation(func.value, item, args[-1][0], statement, state, frame, container=True)
                return NONE
            return NONE
        if held is not None and held.clears and receiver.kind in (Kind.LIST, Kind.DICT, Kind.UNKNOWN):
            statement = self.statement(frame)
            if statement is not None:
                self.store_in_place(func.value, Value(receiver.kind if receiver.kind is not Kind.UNKNOWN else Kind.LIST),
                                    state, frame, statement)
            return NONE
        if held is not None and held.returns in (Returns.ITEM, Returns.RECEIVER) \
                and receiver.kind in (Kind.LIST, Kind.DICT, Kind.UNKNOWN):
            given, _ = self.eval_args(call, state, frame)
            if held.missing is not None and receiver.kind is Kind.DICT:
                # A key the mapping may not hold gives the default (None unless one is passed).
                missing = given[held.missing][1] if len(given) > held.missing else NONE
                if receiver.items == "" and not receiver.nodes:
                    return missing  # nothing was ever stored in it
                stored = receiver.ref if isinstance(receiver.ref, Value) and known_objects(receiver.ref) \
                    else self.element_of(receiver)
                return join(stored, missing)
            if held.returns is Returns.RECEIVER and held.named:
                # `d.items()`: each item a pair of a name and what the mapping holds.
                item = self.element_of(receiver) if receiver.kind is not Kind.UNKNOWN else replace(
                    receiver, kind=Kind.UNKNOWN, label=None)
                pair = Value(Kind.TUPLE, item.nodes, item.top, item.grad, elems=(UNKNOWN, item))
                return replace(self.container_of(Kind.LIST, [item]), ref=pair)
            if held.returns is Returns.RECEIVER:
                return receiver
            return self.element_of(receiver) if receiver.kind is not Kind.UNKNOWN else receiver
        if held is not None and held.returns is Returns.VALUE and receiver.kind in (Kind.DICT, Kind.LIST, Kind.UNKNOWN):
            # `params.keys()` (only a mapping has it): the names its values are stored under, none of
            # their graphs.
            self.eval_args(call, state, frame)
            return Value(Kind.LIST, items="")
        update = api.method(method, Receiver.OPTIMIZER)
        if update is not None and update.updates_weights and receiver.kind in (Kind.UNKNOWN, Kind.TENSOR) \
                and not receiver.nodes and api.method(method, Receiver.TENSOR) is None \
                and label is not None and label in self.grad_resets(frame):
            # `opt.zero_grad(); ...; opt.step()` on an object the analysis cannot see into (handed
            # over in a list, built by a factory, an attribute set where it does not look): an
            # optimizer of unknown modules (no tensor has that method).
            receiver = Value(Kind.OPTIMIZER, ref=f"?{label}", label=label)
        if update is not None and update.updates_weights and receiver.kind is Kind.OPTIMIZER:
            args, kwargs = self.eval_args(call, state, frame)
            closure = self._called_back(update, args, kwargs)
            if closure is not None and closure.kind is Kind.FUNCTION and isinstance(closure.ref, FunctionInfo):
                times = 2 if receiver.qual in K.MULTI_CLOSURE_OPTIMIZERS else 1
                for _ in range(times):
                    self.call_function(closure.ref, [], {}, state, frame, None, call)
            self.optimizer_step(receiver, label, state, call, frame)
            return UNKNOWN
        reset = api.method(method, Receiver.OPTIMIZER)
        if reset is not None and reset.resets_grads and receiver.kind is Kind.OPTIMIZER and label is not None:
            state.unfilled = state.unfilled | {label}
        kept = self._keeps_module(method, receiver, label)
        if kept is not None:
            self.eval_args(call, state, frame)
            return kept
        hook = api.method(method, Receiver.MODULE)
        if hook is not None and hook.calls is not None and hook.calls.when is When.FORWARD:
            args, kwargs = self.eval_args(call, state, frame)
            registered = self._called_back(hook, args, kwargs)
            if registered is not None:
                self.touch((HOOKS, method))
                hooks = state.heap.get((HOOKS, method))
                existing = hooks.elems if hooks is not None and hooks.elems is not None else ()
                if not any(h is registered or (h.ref is not None and h.ref is registered.ref) for h in existing):
                    # One registration stands for all of the same function (a loop over layers).
                    state.heap[(HOOKS, method)] = Value(Kind.TUPLE, elems=(*existing, registered))
            return UNKNOWN
        family = api.family_of(receiver.qual) if receiver.qual else None
        drawn = api.method(method, Receiver.DISTRIBUTION)
        if drawn is not None and drawn.returns is Returns.FRESH and (
                (family is not None and family.returns is Returns.DISTRIBUTION)
                or (receiver.kind in (Kind.UNKNOWN, Kind.TENSOR) and api.method(method, Receiver.TENSOR) is None)):
            # A draw without a graph (`sample()`): of a known distribution, or of whatever an unseen
            # model returned, since no tensor has that method.
            self.eval_args(call, state, frame)
            return FRESH
        wrapper = api.method(method, Receiver.ACCELERATOR)
        if wrapper is not None and wrapper.returns in (Returns.ARGUMENT, Returns.ARGUMENTS) and not receiver.nodes:
            # accelerate's `prepare` and Fabric's `setup` hand their arguments back, wrapped.
            args, _ = self.eval_args(call, state, frame)
            values = [v for _, v in args]
            if len(values) == 1 or (values and wrapper.returns is Returns.ARGUMENT):
                return values[0]
            return Value(Kind.TUPLE, elems=tuple(values)) if values else UNKNOWN
        scaler = api.method(method, Receiver.SCALER)
        if scaler is not None and scaler.returns is Returns.ARGUMENT and receiver.kind is not Kind.TENSOR:
            args, kwargs = self.eval_args(call, state, frame)
            return args[0][1] if args else UNKNOWN
        args, kwargs = self.eval_args(call, state, frame)
        receiver = self.refresh(receiver, read_at, state)
        operands: Args = [(func.value, receiver), *args, *((None, v) for v in kwargs.values())]
        if method in K.INPLACE_OPS:
            self.note_written(call, func.value, receiver, state, frame)
            written = not state.no_grad and any(requires_grad(v) for _, v in operands[1:])
            if receiver.nodes or receiver.grad:
                # Still the same tensor: one of a module's parameters stays one (`p.mul_(m).add_(x)`).
                updated = replace(self.derive(call, operands, state, frame, in_place=True),
                                  parameters_of=receiver.parameters_of)
                state.replace_everywhere(receiver, updated)
                if written and receiver.parameters_of is not None:
                    self.write_parameters(receiver.parameters_of, updated, state, frame)
                return updated
            if written and receiver.kind in (Kind.TENSOR, Kind.UNKNOWN):
                # A tensor without graph written in place from one that has one (`bank.index_copy_(0,
                # idx, feats)`, `buffer.mul_(m).add_(x.mean())`): it requires grad from now on, with
                # that graph.
                updated = self.write_in_place(call, viewed_base(func.value), receiver, operands, state, frame)
                if receiver.parameters_of is not None:
                    self.write_parameters(receiver.parameters_of, updated, state, frame)
                return replace(updated, parameters_of=receiver.parameters_of)
            if receiver.kind is Kind.TENSOR:
                return receiver  # an in-place op hands back its receiver
        if receiver.kind is Kind.MODULE or (label is not None and label in self.module_names):
            module_fact = api.method(method, Receiver.MODULE)
            returns = module_fact.returns if module_fact is not None else None
            if module_fact is not None and returns is Returns.PARAMETERS:
                return self.parameters_listed(receiver, label, state, module_fact)
            if method in K.MODULE_EVIDENCE_METHODS or returns is Returns.BUFFERS:
                return UNKNOWN
            # A method of a frozen module (`vae.encode(x)`) makes no graph of its own either.
            frozen = self.is_frozen(label, state) or self.frozen_depth > 0
            result = self.derive(call, operands[1:], state, frame, source=not frozen, consumer=dotted(func))
            if receiver.qual is None and result.nodes and not any(v.nodes or v.grad for _, v in operands[1:]):
                # A method of a model whose class is not seen, called without tensors that carry a
                # graph (`self.model.sample(n)`): it may well generate data under no_grad.
                self.unsure.add(self.site(call, frame))
            return result
        if receiver.kind is Kind.DATA:
            return receiver
        if receiver.kind in (Kind.UNKNOWN, Kind.NONE, Kind.SCALAR) and not (receiver.nodes or receiver.grad):
            if any(v.nodes or v.grad for _, v in operands[1:]):
                return self.derive(call, operands[1:], state, frame, consumer=dotted(func))
            return UNKNOWN
        keeps = receiver.kind is Kind.TENSOR \
            and api.keeps_its_result(TENSOR_PREFIX + method, [False, *_numbers_given(call)])
        return self.derive(call, operands, state, frame, keeps_result=keeps)

    def write_input(self, call: cst.Call, target: cst.BaseExpression, written: Value, operands: Args,
                    keeps_result: bool, state: State, frame: Frame) -> Value:
        """A call that writes its first argument in place and hands it back (an activation built or
        called with `inplace=True`): what nodes kept of it changes under them, and every name of
        that tensor holds the result."""
        self.note_written(call, target, written, state, frame)
        if not (written.nodes or written.grad) or state.no_grad:
            return written
        updated = self.derive(call, operands, state, frame, in_place=True, keeps_result=keeps_result)
        state.replace_everywhere(written, updated)
        return updated

    def write_in_place(self, call: cst.Call, target: cst.BaseExpression, receiver: Value, operands: Args,
                       state: State, frame: Frame) -> Value:
        """An in-place op writes what its operands carry into its receiver: every name of that tensor,
        and the place it was read from, hold the result (an in-place op returns its receiver)."""
        updated = self.derive(call, operands, state, frame, in_place=True)
        state.replace_everywhere(receiver, updated)
        statement = self.statement(frame)
        if statement is not None and isinstance(target, (cst.Name, cst.Attribute, cst.Subscript)):
            holder = self.tensor_holder(target, state, frame)
            self.store_in_place(target, updated, state, frame, statement)
            if holder is not None:
                self.grown_holders.add(holder.key)
        return updated


    def note_written(self, call: cst.CSTNode, target: cst.BaseExpression, receiver: Value, state: State,
                     frame: Frame) -> None:
        """`target` (holding `receiver`) is written in place by `call`, with grad or without: what
        nodes kept of it changes under them (`modified_in_place`)."""
        holder = self.holder_of(viewed_base(target), state, frame)
        if holder is not None:
            self.modified_in_place(holder, call, state, frame)
        if receiver.parameters_of is not None:
            key = self.parameters_key(receiver.parameters_of)
            owner = (receiver.label or "").removeprefix("params:") or receiver.parameters_of.label or "module"
            if key is not None:
                self.modified_in_place(Holder("attribute", key, f"{owner}.parameters()"), call, state, frame)
            if owner != "module" and _reads_gradients(call):
                # `p.sub_(lr * p.grad)`: a step by hand. The module is trained, as by an optimizer (not
                # a target network blended from another's weights).
                self.optimizer_owners.add(owner)

    def copy_of(self, original: Value, call: cst.Call, state: State, frame: Frame) -> Value:
        """`copy.deepcopy(x)`: a module or object of its own, made where the copy is assigned (what
        was kept on the original is kept on the copy too); a tensor copied is a leaf."""
        if original.kind not in (Kind.MODULE, Kind.INSTANCE):
            return cut(original)
        where = self.allocation(call, frame) or f"<copy {self.site(call, frame)}>"
        copied = replace(original, alloc=where)
        if copied.kind is Kind.INSTANCE and isinstance(copied.ref, ClassInfo):
            owner, mine = heap_owner(original), heap_owner(copied)
            self.touch_owner(owner)
            for (key, attribute), value in list(state.heap.items()):
                if key == owner:
                    state.heap[(mine, attribute)] = value
                    state.hdefs[(mine, attribute)] = state.hdefs.get((key, attribute), frozenset())
        return copied

    def parameters_key(self, module: Value) -> tuple[str, str] | None:
        """Where the graph that in-place writes gave a module's parameters is kept: per object of a
        project class, per library module made where it is assigned, else by the name it goes by."""
        if module.kind is Kind.INSTANCE and isinstance(module.ref, ClassInfo):
            return (heap_owner(module), PARAMETERS)
        if module.alloc is not None:
            return (PARAMETERS, f"{module.qual}@{module.alloc}")
        # A module known by the name it is used as (an argument of a function analysed on its own);
        # one a library constructor made, nowhere assigned, has no name of its own.
        return (PARAMETERS, module.label) if module.label and module.qual is None else None

    def write_parameters(self, module: Value, written: Value, state: State, frame: Frame) -> None:
        """A parameter of `module` written in place from a graph outside `no_grad` (an EMA teacher's
        `t.mul_(m).add_((1 - m) * s)`): the module's parameters hold that graph from now on, under
        the old one (an in-place op keeps the history), and every later call of the module reads it."""
        key = self.parameters_key(module)
        if key is None:
            return
        self.touch(key)
        self.grown_holders.add(key)
        state.heap[key] = join(state.heap.get(key), replace(written, kind=Kind.TENSOR, label=None,  # type: ignore[index]
                                                             parameters_of=None))
        statement = self.statement(frame)
        if statement is not None:
            state.hdefs[key] = state.hdefs.get(key, frozenset()) | {statement}  # type: ignore[index,call-overload]

    def parameter_graphs(self, module: Value, label: str | None, node: cst.CSTNode, state: State,
                         frame: Frame) -> list[tuple[cst.BaseExpression | None, Value]]:
        """What a call of `module` reads of graphs written into parameters: its own, and those of the
        objects whose forward is running it (`self.fc(x)` inside the teacher's forward)."""
        found = [graph for graph in self.parameters_in_use]
        own = self.parameters_graph(module, label, node, state, frame)
        if own is not None:
            found.append(own)
        return [(None, graph) for graph in found]

    def parameters_graph(self, module: Value, label: str | None, node: cst.CSTNode, state: State,
                         frame: Frame) -> Value | None:
        """The graph in-place writes gave `module`'s parameters, read by a call of it (None: none)."""
        key = self.parameters_key(module)
        if key is None:
            return None
        self.touch(key)
        kept = state.heap.get(key)  # type: ignore[call-overload]
        if kept is None or not kept.nodes:
            return None
        shown = f"{label or module.label or 'module'}.parameters()"
        holder = Holder("attribute", key, shown)
        read = Read(holder, kept.nodes, node, self.statement(frame), None, kept.top,
                    self.defs_of(holder, state, frame), tuple(frame.statements), frame.function)
        return replace(kept, via=(read,))



def viewed_base(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The tensor an expression shares its storage and version with: through views (`w.t()`,
    `w[:, :k]`), `detach()`, and in-place ops, which return their receiver (`buf.mul_(m)`)."""
    while True:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            fact = api.method(expr.func.attr.value, Receiver.TENSOR)
            if fact is None or not (fact.returns is Returns.VIEW or fact.inplace or fact.shares_storage):
                return expr
            expr = expr.func.value
        elif isinstance(expr, cst.Attribute) and (fact := api.method(expr.attr.value, Receiver.TENSOR)) is not None \
                and fact.returns is Returns.VIEW:
            expr = expr.value  # `w.T`
        elif isinstance(expr, cst.Subscript) and all(
                isinstance(e.slice, cst.Slice) or (isinstance(e.slice, cst.Index) and isinstance(
                    e.slice.value, (cst.Integer, cst.Ellipsis))) for e in expr.slice):
            expr = expr.value
        else:
            return expr


def _parameters_target(key: tuple[str, str]) -> str:
    """What `freeze` records for the parameters of one module object (never a label of the code)."""
    return f"<{key[0]} {key[1]}>"


def _given(call: cst.Call, keyword: str | None) -> bool:
    """Whether a call passes `keyword` (not as a literal None); True when no keyword is asked for."""
    if keyword is None:
        return True
    return any(arg.keyword is not None and arg.keyword.value == keyword
               and not (isinstance(arg.value, cst.Name) and arg.value.value == "None") for arg in call.args)


def _argument(call: cst.Call, position: int | str, keyword: str | None) -> cst.BaseExpression | None:
    """The expression passed for a parameter, by position or by keyword."""
    name = position if isinstance(position, str) else keyword
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    if isinstance(position, int) and position < len(positional):
        return positional[position]
    return None


def is_api_reference(value: Value) -> bool:
    """A library class held as a value (`Evaluator.api_reference`)."""
    return value.kind is Kind.CLASS and value.ref is None and value.qual is not None


def grad_resets_in(node: cst.CSTNode) -> frozenset[str]:
    """The receivers of an optimizer's gradient reset (`opt.zero_grad()`) in a function's code."""
    found: set[str] = set()

    class Finder(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in K.GRAD_RESETS:
                text = dotted(func.value)
                if text is not None:
                    found.add(text)

    walk(node, Finder())
    return frozenset(found)


def _layers_keep_weights(layers: list[Value]) -> bool | None:
    """For a chain of library layers (`nn.Sequential(nn.Linear(...), nn.ReLU())`) called on data: False
    when the only layer with parameters is the first one to have any and its graph keeps none of them
    on data (a Linear); None when not known (a layer that is no library module, or no fact)."""
    weighted: list[Value] = []
    for layer in layers:
        if layer.kind is not Kind.MODULE or layer.qual is None or layer.ref is not None or layer.weights:
            return None
        fact = api.lookup(layer.qual)
        if fact is None:
            return None
        if not fact.parameterless:
            weighted.append(layer)
    if len(weighted) != 1:
        return None
    fact = api.lookup(weighted[0].qual)  # type: ignore[arg-type]
    return False if fact is not None and fact.keeps_weights is False else None


def _literal_true(call: cst.Call, keyword: str, position: int | None) -> bool:
    """Whether a call passes a literal True as `keyword`, or as its positional argument `position`."""
    given = [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == keyword]
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    if position is not None and position < len(positional):
        given.append(positional[position])
    return any(isinstance(value, cst.Name) and value.value == "True" for value in given)


def _string_keyword(call: cst.Call, keyword: str) -> str | None:
    """The plain string literal a call passes as `keyword`, if it does."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword and isinstance(arg.value, cst.SimpleString):
            value = arg.value.evaluated_value
            return value if isinstance(value, str) else None
    return None


def _numbers_given(call: cst.Call) -> list[bool]:
    """For each argument of a call, in order (keywords last), whether it is a literal number."""
    def number(expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.UnaryOperation):
            expr = expr.expression
        return isinstance(expr, (cst.Integer, cst.Float))

    return [arg.keyword is None and not arg.star and number(arg.value) for arg in call.args]


def _probed_form(call: cst.Call, name: str) -> bool:
    """Whether a call has the form its generated fact was probed with (no more positional
    arguments): the fact says nothing of another overload. Hand-written facts hold for every form."""
    arity = api.probed_arity(name)
    if arity is None:
        return True
    positional = [arg for arg in call.args if arg.keyword is None]
    return not any(arg.star for arg in positional) and len(positional) <= arity


def _reads_gradients(node: cst.CSTNode) -> bool:
    """Whether an expression reads some tensor's gradient (`p.grad`)."""
    found = False

    class Finder(cst.CSTVisitor):
        def visit_Attribute(self, attribute: cst.Attribute) -> None:
            nonlocal found
            found = found or attribute.attr.value == GRADIENT

    walk(node, Finder())
    return found


def _may_hand_a_loss(method: str, call: cst.Call) -> bool:
    """Whether a call of a method whose backward starts from its argument (mmengine's
    `optim_wrapper.update_params(loss)`) can be one: it hands a first argument over, and not a
    collection written out (`patched.update_params(params=[...])` of another library installs
    weights). A method whose backward may start from its receiver (`loss.backward()`) always can."""
    roots = api.backward_roots(method)
    if any(root is not Role.ARGUMENT for root in roots):
        return True
    first = call.args[0] if call.args else None
    if first is None or first.keyword is not None or first.star:
        return False
    return not isinstance(first.value, (cst.List, cst.Tuple, cst.Set, cst.Dict, cst.ListComp, cst.SetComp,
                                        cst.DictComp, cst.GeneratorExp))



@lru_cache(maxsize=1024)
def _class_level_names(node: cst.ClassDef) -> frozenset[str]:
    """The names a class body binds at its own level (`s0 = env.s0`, `state_shape: tuple = ...`);
    cached by node (syntax nodes never change), as `lacks` asks at every call on such an object."""
    found: set[str] = set()
    for statement in node.body.body:
        for small in getattr(statement, "body", ()) if isinstance(statement, cst.SimpleStatementLine) else ():
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
                [small.target] if isinstance(small, cst.AnnAssign) else []
            found.update(t.value for t in targets if isinstance(t, cst.Name))
    return frozenset(found)
