"""Runs the interpreter over a whole file: the module's own code, then every function and method as
an entry point of its own (library code is called from elsewhere), with shared findings."""

from __future__ import annotations

import time

import libcst as cst

from gradguard.analysis import api
from gradguard.analysis import knowledge as K
from gradguard.analysis.api import Returns
from gradguard.analysis.evidence import Role, annotated_role, methods_called, roles_in
from gradguard.analysis.expressions import BudgetExceeded, TimeLimit, role_value
from gradguard.analysis.interpreter import Interpreter
from gradguard.analysis.names import canonical, import_bindings, qualify, star_import
from gradguard.analysis.project import ModuleInfo, Project
from gradguard.analysis.state import ClassInfo, Frame, FunctionInfo, State
from gradguard.analysis.values import CallInfo, CallKind, Kind, Value
from gradguard.parse import nodes_of, walk


def module_imports(module: cst.Module) -> dict[str, str]:
    """Imports made at the top level of a module (including inside top-level `if`/`try`)."""
    return _top_imports(module)[0]


def star_imports(module: cst.Module) -> tuple[str, ...]:
    """The modules a module takes every public name of (`from .model import *`), in order."""
    return _top_imports(module)[1]


def _top_imports(module: cst.Module) -> tuple[dict[str, str], tuple[str, ...]]:
    bound: dict[str, str] = {}
    stars: list[str] = []
    pending: list[cst.CSTNode] = list(module.body)
    while pending:
        statement = pending.pop(0)
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    bound.update(import_bindings(small))
                    star = star_import(small)
                    if star is not None:
                        stars.append(star)
        elif isinstance(statement, (cst.If, cst.Try, cst.With)):
            pending.extend(statement.body.body)  # type: ignore[union-attr]
            for extra in ("orelse", "handlers"):
                part = getattr(statement, extra, None)
                if isinstance(part, (cst.Else, cst.If)):
                    pending.extend(part.body.body)  # type: ignore[union-attr]
                elif isinstance(part, tuple):
                    for handler in part:
                        pending.extend(handler.body.body)
    return bound, tuple(stars)


class Program(Interpreter):
    """The analysis of one module."""

    def __init__(self, module: cst.Module, modules: frozenset[str], project: Project | None = None) -> None:
        super().__init__(module_imports(module), modules)
        self.stars = star_imports(module)
        self.module = module
        self.module_node = module
        self.project = project
        self.top_functions: list[FunctionInfo] = []
        self.constructing: set[int] = set()  # classes whose `__init__` builds an object for an entry
        self.imports_loaded = False  # whether every project module the file imports from is loaded
        self._collect(module.body, None, "")

    def _collect(self, body: tuple | list, owner: ClassInfo | None, prefix: str,
                 source: ModuleInfo | None = None) -> None:
        imports = source.imports if source is not None else self.imports
        for statement in body:
            if isinstance(statement, cst.FunctionDef):
                info = self.function_info(statement, f"{prefix}{statement.name.value}", imports,
                                          owner=owner, module=source)
                self.functions[statement] = info
                if owner is not None:
                    owner.methods[statement.name.value] = info
                elif source is None:
                    self.top_functions.append(info)
                else:
                    self.namespace_of(source)[statement.name.value] = Value(Kind.FUNCTION, ref=info)
            elif isinstance(statement, cst.ClassDef):
                bases = []
                for base in statement.bases:
                    name = qualify(base.value, imports)
                    if name is not None:
                        bases.append(canonical(name))
                        if self.project is not None:
                            # A base class of another project module: its methods are this class's.
                            self.project_value(name, source)
                    elif isinstance(base.value, cst.Name):
                        bases.append(base.value.value)
                info = ClassInfo(statement, statement.name.value, tuple(bases), module=source)
                self.classes[statement] = info
                if source is not None and owner is None and prefix == "":
                    self.namespace_of(source)[statement.name.value] = Value(Kind.CLASS, ref=info)
                self._collect(statement.body.body, info, f"{statement.name.value}.", source)
                if any(base in K.AUTOGRAD_FUNCTIONS for base in info.bases):
                    # A custom autograd.Function's forward and backward run with grad mode off.
                    for method in info.methods.values():
                        method.no_grad = True
                    info.joins = frozenset(name for base in info.bases if (fact := api.lookup(base)) is not None
                                           and fact.base is not None for name in fact.base.joins)
            elif isinstance(statement, (cst.If, cst.Try)) and owner is None:
                self._collect(statement.body.body, owner, prefix, source)
            if isinstance(statement, cst.FunctionDef):
                self._collect_nested_classes(statement.body.body, f"{prefix}{statement.name.value}.", source)
        if owner is None and prefix == "":
            self._classify_classes()

    def load_module(self, info: ModuleInfo) -> None:
        """Make a project module's classes and functions known (once)."""
        if info in self.loaded_modules:
            return
        self.loaded_modules.add(info)
        self.namespace_of(info)
        self._collect(info.module.body, None, "", info)

    def _collect_nested_classes(self, body: tuple | list, prefix: str, source: ModuleInfo | None) -> None:
        """Classes defined inside functions (a model class inside a test, a class a factory method
        builds and returns) are classes too."""
        for statement in body:
            if isinstance(statement, cst.ClassDef):
                self._collect([statement], None, prefix, source)
            elif isinstance(statement, (cst.If, cst.For, cst.While, cst.With, cst.Try)):
                self._collect_nested_classes(statement.body.body, prefix, source)  # type: ignore[union-attr]

    def _classify_classes(self) -> None:
        by_name = {c.name: c for c in self.classes.values() if c.module is not None}
        by_name.update({c.qualname: c for c in self.classes.values() if c.module is not None})
        by_name.update({c.name: c for c in self.classes.values() if c.module is None})
        changed = True
        while changed:
            changed = False
            for info in self.classes.values():
                module = (any(api.makes(b) is Returns.MODULE for b in info.bases) or api.FORWARD in info.methods
                          or any(b in K.LIGHTNING_MODULES for b in info.bases)
                          or any(by_name[b].is_module for b in info.bases if b in by_name))
                lightning = any(b in K.LIGHTNING_MODULES for b in info.bases) or any(
                    by_name[b].is_lightning for b in info.bases if b in by_name)
                optimizer = any(api.makes(b) is Returns.OPTIMIZER for b in info.bases) or any(
                    by_name[b].is_optimizer for b in info.bases if b in by_name)
                if (module, lightning, optimizer) != (info.is_module, info.is_lightning, info.is_optimizer):
                    info.is_module, info.is_lightning, info.is_optimizer = module, lightning, optimizer
                    changed = True

    def run(self) -> None:
        """Analyse the module, then each function and method as its own entry point."""
        self.deadline = time.process_time() + self.time_budget
        state = State()
        frame = Frame(None, None, [], 0, imports=dict(self.imports))
        self._start_entry(self.module)
        cut = len(self.incomplete)
        try:
            self.exec_block(self.module.body, state, frame, self.module)
            self.module_complete = len(self.incomplete) == cut
        except (BudgetExceeded, RecursionError) as exc:
            self.incomplete.append((_give_up(exc), None, "<module>"))
            self.conflicts.clear()
            self.accumulations.clear()
            state = self._definitions_only()
        globals_after = state.copy()
        globals_after.dead = False
        # Functions analysed on their own start from what the module built, not from what its
        # own run of them freed: that would be an order of calls nobody wrote.
        globals_after.freed = {}
        globals_after.retained = {}
        for info in self.top_functions:
            self._entry(info, globals_after, None)
        for cls in [c for c in self.classes.values() if c.module is None]:
            instance = Value(Kind.INSTANCE, ref=cls, label="self")
            base_state = globals_after.copy()
            init = self.method_of(cls, "__init__")
            if init is not None:
                base_state = self._entry(init, base_state, instance) or base_state
            for name, method in cls.methods.items():
                if name == "__init__":
                    continue
                framework = self._framework_backward(cls, name)
                after = self._entry(method, base_state, instance, framework=framework)
                if framework and after is not None:
                    # The framework calls it again for the next batch, with what the object kept.
                    self._entry(method, after, instance, framework=True)

    def _definitions_only(self) -> State:
        """The module's state from its definitions alone (imports, functions, classes, assignments
        that call nothing): what the functions analysed as entries need to find each other when
        the module's own run was cut short."""
        state = State()
        frame = Frame(None, None, [], 0, imports=dict(self.imports))
        self._start_entry(self.module)
        for statement in self.module.body:
            if isinstance(statement, cst.SimpleStatementLine):
                if any(not isinstance(small, (cst.Import, cst.ImportFrom, cst.Assign, cst.AnnAssign))
                       or _calls_anything(small) for small in statement.body):
                    continue
            elif not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                continue
            try:
                self.exec_statement(statement, state, frame)
            except (BudgetExceeded, RecursionError):
                break
        self.conflicts.clear()
        self.accumulations.clear()
        return state

    def _start_entry(self, node: cst.CSTNode) -> None:
        """Start one entry point: each statement of its own body gets a step budget of its own
        (`Interpreter.guarded_parts`); this one covers only what runs before its body."""
        self.entry_owner = node
        self.guarding = False
        self.steps = 0
        self.step_limit = self.max_steps

    def _framework_backward(self, cls: ClassInfo, method: str) -> bool:
        """Lightning calls backward on what `training_step` returns, unless optimization is manual;
        the transformers Trainer on what `compute_loss` returns."""
        if any((base, method) in K.FRAMEWORK_BACKWARD for base in cls.bases):
            return True
        return cls.is_lightning and method in K.MANUAL_BACKWARD_ON and not cls.manual_optimization \
            and not self._sets_manual_optimization(cls)

    @staticmethod
    def _sets_manual_optimization(info: ClassInfo) -> bool:
        """`self.automatic_optimization = False` in `__init__`."""
        init = info.methods.get("__init__")
        if init is None:
            return False
        return any(
            len(assign.targets) == 1
            and isinstance(target := assign.targets[0].target, cst.Attribute)
            and isinstance(target.value, cst.Name) and target.value.value == "self"
            and target.attr.value in K.MANUAL_FLAGS
            and isinstance(assign.value, cst.Name) and assign.value.value == "False"
            for assign in nodes_of(init.node, cst.Assign)
        )

    def _entry(self, info: FunctionInfo, start: State, instance: Value | None,
               framework: bool = False) -> State | None:
        """Run one function with unknown arguments; the state it leaves (for `__init__`)."""
        if time.process_time() > self.deadline:
            self.incomplete.append(("time", info.node, info.qualname))
            return None
        node = info.node
        assert isinstance(node, cst.FunctionDef)
        params = [*node.params.posonly_params, *node.params.params][1 if instance is not None else 0:]
        # Objects of the program's own classes, known by the methods the body calls on them, are built
        # first (their `__init__` run as an entry of its own would run it).
        objects: dict[str, Value] = {}
        for name, cls in self._classes_by_use(info, params).items():
            objects[name] = Value(Kind.INSTANCE, ref=cls, label=name, alloc=f"{info.qualname}.{name}")
            init = self.method_of(cls, "__init__")
            if init is not None:
                self.constructing.add(id(cls))
                try:
                    start = self._entry(init, start, objects[name]) or start
                finally:
                    self.constructing.discard(id(cls))
        self._start_entry(info.node)
        state = start.copy()
        frame = Frame(None, None, [], 0, imports=dict(self.imports))
        roles = roles_in(node.body, self.imports)
        args = [(None, objects.get(param.name.value) or self.unseen_argument(param, roles, state, frame))
                for param in params]
        met = set(self.conflicts)
        accumulated = set(self.accumulations)
        try:
            result = self.call_function(info, args, {}, state, frame, instance, node)
        except (BudgetExceeded, RecursionError) as exc:
            self.incomplete.append((_give_up(exc), info.node, info.qualname))
            # What a cut-short run met came from loops that never reached their fixed point: a
            # guess, not a finding (the give-up itself is reported).
            for key in set(self.conflicts) - met:
                del self.conflicts[key]
            for key in set(self.accumulations) - accumulated:
                del self.accumulations[key]
            return None
        if framework:
            # The framework backward-s what each path returns, in the state of that path.
            paths = self.last_returns or [(state, result)]
            for path_state, returned in paths:
                if returned.keys is not None and returned.elems is not None:
                    found = [e for k, e in zip(returned.keys, returned.elems) if k in K.FRAMEWORK_LOSS_KEYS]
                    returned = found[0] if found else returned
                elif returned.elems:
                    returned = returned.elems[0]
                self._framework_call(info, returned, path_state)
            # What the object keeps for the next call, with the graphs the framework's backward freed.
            return State.join_all([path_state for path_state, _ in paths]) or state
        return state

    def _classes_by_use(self, info: FunctionInfo, params: list[cst.Param]) -> dict[str, ClassInfo]:
        """The parameters no visible caller passes whose class is the one class of the program that
        defines every method the body calls on them (`def train(model, windows, opt)` calling
        `model.observe(...)` and `model.initial(...)`: the file's `Filter`); several such classes, or
        none, and the parameter stays what its uses make it."""
        called = methods_called(info.node.body)
        found: dict[str, ClassInfo] = {}
        for param in params:
            name = param.name.value
            methods = called.get(name)
            if not methods or param.default is not None:
                continue
            if not self.imports_loaded:
                # The classes the file imports from the project may be the one (`from gan import PairGAN`).
                self.imports_loaded = True
                for qualified in list(self.imports.values()):
                    self.project_value(qualified, None)
            # A class's methods are looked up through its bases, which may load more modules (and classes).
            matching = [c for c in list(self.classes.values())
                        if id(c) not in self.constructing and all(self.method_of(c, m) for m in methods)]
            if len(matching) == 1:
                found[name] = matching[0]
        return found

    def unseen_argument(self, param: cst.Param, roles: dict[str, Role], state: State, frame: Frame) -> Value:
        """The value of an argument no visible caller passes: a class or function given as its default
        (`actor_critic=core.ActorCritic`, `optimizer_class=optim.Adam`: what callers leave as it is),
        else what the body uses it as."""
        if param.default is not None and isinstance(param.default, (cst.Name, cst.Attribute)):
            default = self.peek(param.default, state, frame) or self.eval(param.default, state, frame)
            if default.kind in (Kind.CLASS, Kind.FUNCTION):
                return default
        role = annotated_role(param.annotation, self.imports) or roles.get(param.name.value)
        return role_value(role, param.name.value)

    def _framework_name(self, cls: ClassInfo) -> str:
        """How messages name the framework that backward-s what a method of `cls` returns: the facts'
        name of the first library base class, through the project's own base classes."""
        todo, seen = [cls], set()
        while todo:
            info = todo.pop(0)
            seen.add(id(info))
            for base in info.bases:
                fact = api.lookup(base)
                if fact is not None and fact.base is not None and fact.base.framework:
                    return fact.base.framework
                todo.extend(c for c in self.classes.values() if c.named_by((base,)) and id(c) not in seen)
        return ""

    def _framework_call(self, info: FunctionInfo, returned: Value, state: State) -> None:
        node = info.node
        owner = info.owner
        framework = self._framework_name(owner) if owner is not None else ""
        call = CallInfo(node, None, CallKind.FRAMEWORK, framework, None, False, False, (), info.qualname)
        self.framework_calls.append(call)
        self.reach(call, returned, state)
        # It frees what it traversed: the next batch's call (see `run`) meets what the object kept.
        self.release(call, returned, False, state)


def _calls_anything(node: cst.CSTNode) -> bool:
    """Whether a statement contains a call (or anything that may run code: a lambda is fine)."""
    class Finder(cst.CSTVisitor):
        found = False

        def visit_Call(self, node: cst.Call) -> bool:
            self.found = True
            return False

    finder = Finder()
    walk(node, finder)
    return finder.found


def _give_up(exc: BaseException) -> str:
    """What a note calls the reason an entry was not followed to the end."""
    if isinstance(exc, TimeLimit):
        return "time"
    return "budget" if isinstance(exc, BudgetExceeded) else "recursion"
