"""Expression evaluation of the abstract interpreter: names, attributes, operators and calls.

Every operation on values that may require grad makes a new graph node (see `values.py`) and records
where its inputs came from (`Origin`), so a conflict can later name the variable that carried a stale
graph. Calls are dispatched by what the callee is: a backward or grad, a torch function known by its
qualified name, a function or class of this file (inlined), a module (a graph source), or anything else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache

import libcst as cst

from gradguard.analysis import knowledge as K
from gradguard.analysis.api.torch_tensor import GRADIENT
from gradguard.analysis.api import (
    FORWARD,
    TRAINING,
    Computes,
    Fact,
    Receiver,
    Returns,
    attribute,
    builtin_names,
    declared_facts,
    lookup,
    makes,
    method,
)
from gradguard.analysis.autograd import Accumulation, AutogradEvents, Met, scoped_key
from gradguard.analysis.calls import Args, CallEvaluation, viewed_base
from gradguard.analysis.conditions import FLAG_ATOM, OPTION_ATOM, Atom, chains_of, consulted_keys, decide, strip_not
from gradguard.analysis.evidence import Role, roles_in
from gradguard.analysis.names import canonical, chains_overlap, dotted, indexed, qualify
from gradguard.analysis.project import ModuleInfo, Project
from gradguard.analysis.scopes import (
    Bindings,
    Placement,
    assigned_in,
    checked_locals,
    placement,
)
from gradguard.analysis.state import ClassInfo, Frame, FunctionInfo, HeapKey, State, heap_owner
from gradguard.analysis.summaries import Entry, Recorder, Summaries, Summary, apply_entry
from gradguard.parse import nodes_of, walk
from gradguard.analysis.values import (
    DATA,
    FRESH,
    GENERATIONS,
    MAX_UNROLLED,
    NONE,
    PARAMETER_READ,
    SCALAR,
    UNKNOWN,
    UNSURE_MODULE,
    CallInfo,
    CallKind,
    Freed,
    Holder,
    Kind,
    Origin,
    Read,
    Value,
    add_item,
    an_object,
    add_item_shape,
    bare,
    join,
    known_objects,
    members,
    node_id,
    old,
    opaque_object,
    rename,
    requires_grad,
)


class BudgetExceeded(Exception):
    """An entry point took more steps than the analysis allows itself."""


class TimeLimit(BudgetExceeded):
    """The file's analysis ran past its safety net in CPU seconds."""



class Evaluator(CallEvaluation, AutogradEvents):
    """Expression evaluation; the statement part lives in `interpreter.Interpreter`."""

    max_depth = 6
    # Steps one entry point (the module's own run, or one function analysed on its own) may take: a
    # base, and more for each line of its code. Each entry has its own budget, so one expensive
    # function never starves the others, and it is counted, not timed: the same file gives the same
    # findings on a busy machine and on an idle one.
    max_steps = 200_000
    steps_per_line = 8
    # A safety net for the whole file in CPU seconds of this process (not wall-clock), far above
    # what the step budgets cost on real code; reaching it is reported as its own note.
    time_budget = 120.0

    def __init__(self, imports: dict[str, str], modules: frozenset[str]) -> None:
        self.imports = imports
        # The project's own helpers as its `[tool.gradguard.api]` declares them, by qualified name.
        self.declared: dict[str, Fact] = {fact.name: fact for fact in declared_facts()}
        self.module_names = modules
        self.functions: dict[cst.CSTNode, FunctionInfo] = {}
        self.classes: dict[cst.CSTNode, ClassInfo] = {}
        self.sites: dict[tuple[cst.CSTNode, cst.CSTNode | None], int] = {}
        self.created: set[int] = set()
        self.origins: dict[int, Origin] = {}
        self.active: list[FunctionInfo] = []
        self.steps = 0
        self.step_limit = self.max_steps
        # The body whose statements each get their own step budget (the entry point's), and
        # whether one of them is running.
        self.entry_owner: cst.CSTNode | None = None
        self.guarding = False
        self.deadline = float("inf")
        # Findings, recorded as they are met; `detect.py` turns them into facts.
        self.conflicts: dict[tuple[int, int], Met] = {}
        self.call_reads: dict[CallInfo, tuple[Read, ...]] = {}
        # Labels of module calls that build graph from parameters of their own (not a loss module),
        # and how many calls of such modules ran (a project module's forward calling one is one).
        self.weighted: set[str] = set()
        self.sources = 0
        # Object attributes read by a test of the object's settings, then assigned.
        self.unsettled: set[tuple[str, str]] = set()
        self.call_roots: dict[CallInfo, frozenset[int]] = {}
        self.call_infos: dict[tuple[int, tuple[int, ...]], CallInfo] = {}
        self.retains: dict[CallInfo, tuple[frozenset[int], dict[int, int]]] = {}
        # Retaining calls an optimizer stepped after (see `AutogradEvents._masked`).
        self.stepped_after_retain: dict[CallInfo, frozenset[str]] = {}
        # The last step call of each optimizer owner (what `Freed.stepped` names).
        self.step_calls: dict[str, CallInfo] = {}
        self.retains_needed: set[CallInfo] = set()
        self.escaped: set[int] = set()
        self.accumulations: dict[cst.CSTNode, Accumulation] = {}
        self.backwarded: set[int] = set()
        # Backward calls reached with a tensor the model knows carries no graph (it would raise
        # "element 0 of tensors does not require grad"): a fix must not bring one about.
        self.graphless_backwards: set[cst.CSTNode] = set()
        # Optimizer step calls run where the optimizer's modules were known (`optimizer_step`).
        self.known_steps: set[cst.CSTNode] = set()
        self.backward_holders: set[tuple[str, ...]] = set()
        self.appended_holders: set[tuple[str, ...]] = set()
        self.reset_holders: set[tuple[str, ...]] = set()
        # Tensors written in place from a graph (a memory bank, a teacher's parameters): each write
        # keeps the history of the ones before, so what one iteration wrote the next ones reach.
        self.grown_holders: set[tuple[str, ...]] = set()
        # For each place a tensor is held (a holder's scoped key, a module's parameters): the nodes
        # that kept it for their backward, by (site, how many times it had been evaluated).
        self.saved_by: dict[tuple[str, ...], set[tuple[int, int]]] = {}
        # The same, by the tensor kept rather than by where it was held: the evaluation (site, count)
        # that made it. A tensor a call returns is written in place under another name in the
        # caller (`value, hx = agent(obs, hx)`, then `hx[done] = 0.0`).
        self.saved_made: dict[tuple[int, int], set[tuple[int, int]]] = {}
        # Tensors made as views of others (`z[:, :c]`, `h.chunk(2, 1)`), by evaluation: the one they
        # view. Views of one tensor share its version: a write into one changes what a node kept
        # of another.
        self.view_bases: dict[tuple[int, int], tuple[int, int]] = {}
        # The parameters keys of the objects whose forward is running (their layers read them).
        self.modules_running: list[tuple[str, str]] = []
        # Modules (by their holder's key) whose parameters were set to another tensor (tied
        # weights): the keys of the places that tensor is held.
        self.tied: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
        # The other places of a tensor held at several (tied weights), by the key of each place.
        self.aliases: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
        self.frozen: set[str] = set()
        self.none_assigned: set[tuple[str, ...]] = set()
        # For each holder, what the items of every list assigned to it anywhere are (`Value.items`):
        # a fix placed where the holder is carried in sees all of them, the first one included.
        # Per entry point: another entry (`train(model, ...)` alone, the model unknown) saw other values.
        self.assigned_items: dict[tuple[int, tuple[str, ...]], str | None] = {}
        # The same for the kind of container assigned ("list", "dict"; None when they differ).
        self.assigned_containers: dict[tuple[int, tuple[str, ...]], str | None] = {}
        self.saving: set[int] = set()
        self.optimizer_owners: set[str] = set()
        # Each optimizer that stepped: its owner group -> the names of the modules it updates (aliases too).
        self.stepping_groups: dict[str, frozenset[str]] = {}
        # Sites whose nodes stand for graphs the model did not see built (a backward's root).
        self.synthetic: set[int] = set()
        # Sites of calls of objects only ever called (`UNSURE_MODULE`): maybe no graph at all.
        self.unsure: set[int] = set()
        # Statements of the linted file whose run draws fresh random numbers (`CallEvaluation.note_draw`).
        self.drawing: set[cst.CSTNode] = set()
        # Statements that bind an object a call made (a module, an optimizer, a loader, an instance of
        # the program's classes): what a computation runs on, never to be made again by a fix.
        self.making: set[cst.CSTNode] = set()
        # The backward calls each entry point reached with a graph (by the ids of the call and of the
        # entry's owner), and whether the module's own run went to its end with nothing cut short.
        self.reached_by: dict[int, set[int]] = {}
        self.module_complete = False
        # The functions (by their node's id) the module's own run called.
        self.module_called: set[int] = set()
        # The expressions passed as the container a call picks items from at random (`random.sample(
        # self.memory, n)`, `self.rng.sample(...)` of a `random.Random`): a store sampled on purpose.
        self.picked: set[cst.CSTNode] = set()
        # Variables and attributes whose value some backward or grad started from.
        self.root_holders: set[tuple[str, ...]] = set()
        self.framework_calls: list[CallInfo] = []
        self.root_defs: dict[CallInfo, frozenset[cst.CSTNode]] = {}
        # Condition atoms made so far (their order: the oldest is forgotten first).
        self.atom_seq = 0
        # The values each command-line option declared with `choices` can hold, by attribute name.
        # (None: declared somewhere without them, so it may hold anything.)
        self.option_domains: dict[str, frozenset[str] | None] = {}
        # The default of each command-line option declared with a plain string default (None when
        # declared without one, or twice with different ones): what the program runs with unless told.
        self.option_defaults: dict[str, str | None] = {}
        # Object atoms (see `object_atom_key`) that paths joined inside the current entry-level
        # statement disagreed on: the statement is run again once per truth (`Interpreter.split_parts`).
        self.split_atoms: dict[str, Atom] = {}
        # While a statement that may be split runs: how many loops were around it (`arm_key`).
        self.arm_loops: int | None = None
        # Arm atoms of branches an arm of which frees a graph or steps an optimizer; `frees` counts
        # those events, so a branch can tell whether one of its arms had one.
        self.freeing_arms: set[str] = set()
        self.frees = 0
        self.unsplittable: set[str] = set()
        self.module_node: cst.Module | None = None
        self.scope_names: dict[cst.CSTNode, Bindings] = {}
        self.placements: dict[cst.CSTNode, Placement] = {}
        self.invariant_tests: dict[tuple[cst.CSTNode, cst.CSTNode], bool] = {}
        self.class_roles: dict[str, dict[str, Role]] = {}
        self.class_made: dict[tuple[str, str], tuple[ClassInfo, str] | None] = {}
        self.loop_names: dict[cst.CSTNode, frozenset[str]] = {}
        self.if_names: dict[cst.CSTNode, frozenset[str]] = {}
        self.counter_slots: dict[cst.CSTNode, frozenset[str]] = {}
        # Flags assigned from tests, by atom key: the test and the flag's truth when it holds.
        self.flag_tests: dict[str, tuple[cst.BaseExpression, bool]] = {}
        self.negations: dict[cst.BaseExpression, cst.BaseExpression] = {}
        # The `a and b` assumed false and `a or b` assumed true, by the key of each part: a part
        # decided later decides the other (`resolve_compound`).
        self.compounds: dict[str, dict[cst.BooleanOperation, None]] = {}
        self.resolving: set[cst.BooleanOperation] = set()
        # Per call of a method in a test, and the method: the test it stands for (`test_of`).
        self.getter_tests: dict[tuple[cst.CSTNode, cst.CSTNode], cst.BaseExpression | None] = {}
        # The modules the linted file takes every public name of (`from models import *`).
        self.stars: tuple[str, ...] = ()
        # Per `for` loop and the outermost loop around it: whether it runs over fixed items (`each_key`).
        self.each_keys: dict[tuple[cst.CSTNode, cst.CSTNode], bool] = {}
        # Every site a derivation aged, with its evaluation count before: what `refresh` replays on
        # a value read before (cleared at each statement of an entry).
        self.renamed: list[tuple[int, int]] = []
        # How many evaluations of each site the generations of `origins` count from.
        self.origin_epochs: dict[int, int] = {}
        # For a `for` loop over a container that sums up several items: the sites with more than
        # one generation in it, each generation another item's own graph.
        self.item_sites: dict[cst.CSTNode, frozenset[int]] = {}
        # Sites of `out["v"]` taken from a value whose items the model does not see (an unread
        # model's output): the string key, and the sites of the graph it is an item of. Two items of
        # one output are not known to share that output's graph (separate heads of one network).
        self.keyed_items: dict[int, tuple[str, frozenset[int]]] = {}
        # Nodes handed out again by a memoising decorator (and the function it decorates) or by a
        # block that caches (None).
        self.memoised: dict[int, FunctionInfo | None] = {}
        # The same nodes by the call that was handed them (`self.relative_bias(x.shape[1])`).
        self.memo_calls: dict[int, cst.CSTNode] = {}
        # Sites of operations on leaves that require grad read directly (a parameter, not a module's
        # call): the objects that hold those leaves (`model` for `model.proto`, as written and as seen
        # from outside the running methods); "?" when that is not known (a bare variable, a constructor's `self`).
        self.leaf_owners: dict[int, frozenset[str]] = {}
        # Calls that compare their arguments (a loss, `torch.sub`): the arguments read as the reference
        # compared against (a loss's target), with whether either side may be it (`Fact.reference`).
        self.comparisons: dict[cst.CSTNode, tuple[bool, tuple[cst.CSTNode, ...]]] = {}
        # Module calls by (site, how many times it had been evaluated): the module called and the
        # objects whose methods were running, whose parameters their nodes saved.
        self.module_calls: dict[tuple[int, int], frozenset[str]] = {}
        # The same calls by the module itself, as labelled from outside every running method
        # (`critic.fc`): which module's parameters the node saved, for optimizers of unknown modules.
        self.module_labels: dict[tuple[int, int], str] = {}
        # The labels of the modules and objects whose methods are running, as written at each call
        # (`self.q`), and as seen from outside the outermost one (`main.q`: `main(x)` ran `self.q(...)`).
        self.owners: list[str] = []
        self.owner_paths: list[str] = []
        self.resets_by_function: dict[cst.CSTNode, frozenset[str]] = {}
        self.codes: dict[cst.CSTNode, str] = {}
        self.calling: dict[cst.CSTNode, bool] = {}  # whether a statement calls anything
        # Other names of the module an optimizer updates (`qf1` given to `__init__` is `self.qf1`).
        self.owner_aliases: dict[str, frozenset[str]] = {}
        # The module object each optimizer owner named (its holders when the optimizer steps are its names too).
        self.owner_objects: dict[str, Value] = {}
        self.class_assigned: dict[object, frozenset[str]] = {}
        self.class_unseen: dict[object, bool] = {}
        self.last_backward: frozenset[int] = frozenset()
        self.last_backward_call: cst.CSTNode | None = None
        # The optimizers stepped after each backward call, before the next one, in each entry's run
        # (by `id` of the entry and of the call's node).
        self.stepped_after: dict[tuple[int, int], frozenset[str]] = {}
        # Classes whose parameters are all frozen, and how many frozen modules' code is running.
        self.frozen_classes: set[str] = set()
        # What the program also unfreezes somewhere (`p.requires_grad = True`, `requires_grad_()`):
        # for those, frozen or not is a fact of the state (`State.frozen`), not of the program.
        self.unfrozen: set[object] = set()
        self.frozen_depth = 0
        # The `parametrize.cached()` blocks being run: the heap keys of the weights each one keeps.
        self.cached_blocks: list[set[tuple[str, str]]] = []
        # The graphs in-place writes gave the parameters of the objects whose forward is running
        # (`CallEvaluation.parameter_graphs`), outermost first.
        self.parameters_in_use: list[Value] = []
        # How many values `hold` has kept (each under a slot of its own).
        self.pending = 0
        # The project modules imported code comes from (`project.py`), as they are read.
        self.project: Project | None = None
        self.loaded_modules: set[ModuleInfo] = set()
        self.namespaces: dict[ModuleInfo, dict[str, Value]] = {}
        self.resolved: dict[tuple[str, int], Value | None] = {}
        # The paths out of the last inlined call: (state at its return, value returned).
        self.last_returns: list[tuple[State, Value]] = []
        self.summaries = Summaries()
        # The summaries being made, innermost last: what each run reads of the path conditions.
        self.recorders: list[Recorder] = []
        # What the analysis did not follow to the end: (what, node, function).
        self.incomplete: list[tuple[str, cst.CSTNode | None, str]] = []

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

    def bases_of(self, info: ClassInfo) -> list[ClassInfo]:  # pragma: no cover
        raise NotImplementedError

    def element_of(self, iterable: Value) -> Value:  # pragma: no cover
        raise NotImplementedError

    def tick(self) -> None:  # pragma: no cover
        raise NotImplementedError

    def attribute_test(self, test: cst.BaseExpression, state: State, frame: Frame) -> bool | None:  # pragma: no cover
        raise NotImplementedError

    def decided_test(self, test: cst.BaseExpression, state: State, frame: Frame) -> bool | None:  # pragma: no cover
        raise NotImplementedError

    # -- names, holders ----------------------------------------------------------------------

    def site(self, node: cst.CSTNode, frame: Frame | None = None) -> int:
        """A stable small integer for an expression site, in the context of the call that runs it:
        a helper's expression evaluated for two different calls (`model.get_state(obs)` in the loop
        and again inside a loss helper) is two sites, so the second does not age the first's graph."""
        key = (node, frame.call_site if frame is not None else None)
        site = self.sites.get(key)
        if site is None:
            site = self.sites[key] = len(self.sites) + 1
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
                return Holder("attribute", (heap_owner(owner), expr.attr.value), text)
            text = dotted(expr)
            if text is not None and owner is not None and owner.kind in (Kind.UNKNOWN, Kind.MODULE):
                return Holder("attribute", state.opaque_key(text), text)
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

    def api_reference(self, expr: cst.Name | cst.Attribute, state: State, frame: Frame) -> Value | None:
        """A library class or function named without being called (`optimizer_class=optim.Adam`), as a
        value: a later call of whatever holds it is a call of that API."""
        name = self.qualified(expr, state, frame)
        if name is None or "." not in name or makes(name) not in _REFERENCED:
            return None
        return Value(Kind.CLASS, label=name, qual=name)

    def decide(self, test: cst.BaseExpression, state: State) -> bool | None:
        """The truth of a branch test on the path to `state` (`conditions.decide`), noted as read; a
        flag assigned from a test on this path is that test."""
        expr, positive = strip_not(test)
        if isinstance(expr, cst.Name) and state.assume:
            flag = self.flag_of(expr.value, state)
            if flag is not None and decide(expr, state.assume) is None:
                test = flag[0] if positive == flag[1] else self.negation(flag[0])
        if self.recorders:
            self.consult(*consulted_keys(test))
        return decide(test, state.assume)

    def flag_of(self, name: str, state: State) -> tuple[cst.BaseExpression, bool] | None:
        """The test a flag stands for on this path (`Interpreter.assume_flag`), if any."""
        prefix = f"{FLAG_ATOM}{name}="
        self.consult(prefix[:-1])
        for key in state.assume:
            if key.startswith(prefix):
                return self.flag_tests[key]
        return None

    def negation(self, test: cst.BaseExpression) -> cst.BaseExpression:
        negated = self.negations.get(test)
        if negated is None:
            negated = self.negations[test] = cst.UnaryOperation(cst.Not(), test)
        return negated

    def invalidate(self, state: State, name: str | None = None, text: str | None = None,
                   heap: tuple[str, str] | None = None, index: int | None = None) -> None:
        """An assignment: the path forgets the conditions that read what it assigned. `index`: the
        frame a variable is bound in; a call's own locals are nothing its callers read (its run
        forgets their conditions on a name it shadows only while it runs, `Recorder.depth`)."""
        for recorder in self.recorders:
            if name is not None and index is not None and index >= recorder.depth:
                continue
            recorder.assigned.add((name, text, heap))
        for atom in state.assign_invalidates(name=name, text=text, heap=heap):
            if atom.level == 0 and atom.heap:
                # A test of an object's settings that the program changes: it keeps no truth.
                self.unsettled |= atom.heap

    def touch(self, *keys: HeapKey) -> None:
        """The analysis reads or writes these heap entries: a summary of a call under way compares
        them (and only the entries it touched) before it is taken again."""
        for recorder in self.recorders:
            recorder.heap_keys.update(keys)

    def attribute_of(self, instance: Value, name: str, state: State) -> Value | None:
        """`State.attribute_of`, noted as read."""
        if self.recorders:
            owner = heap_owner(instance)
            if instance.alloc is None:
                self.touch_scan(owner, name)  # also `owner@...`: any object of its class
            else:
                self.touch((owner, name))
        return state.attribute_of(instance, name)

    def touch_owner(self, owner: str) -> None:
        """Every attribute of one object is read (its submodules, what holds a value)."""
        for recorder in self.recorders:
            recorder.heap_owners.add(owner)

    def touch_scan(self, owner_prefix: str, attribute_prefix: str = "") -> None:
        """Every heap entry whose owner and attribute start so is read."""
        for recorder in self.recorders:
            recorder.heap_scans.add((owner_prefix, attribute_prefix))

    def note_evaluation(self, entry: Entry) -> None:
        """Record a fact keyed by how often a site had been evaluated (what a module call's node
        keeps, where a saved tensor is held) in the table it belongs to, and in the journal of every
        call under way: a summary replays it shifted to the counts of the state it is taken in."""
        apply_entry(self, entry)
        for recorder in self.recorders:
            recorder.journal.append(entry)

    def consult(self, *keys: str) -> None:
        """The analysis reads (or tests for) these assumptions of the path: a summary of a call
        under way holds only for paths that agree on them."""
        for recorder in self.recorders:
            recorder.consulted.update(keys)

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
        if frame.module is not None:
            # Code of a project module: its globals are that module's classes and functions
            # (`define_G` calling `G_Unet(...)` and `init_net(net)` of its own file).
            return self.namespace_of(frame.module).get(name)
        return state.frames[0].get(name)

    def load_module(self, info: ModuleInfo) -> None:  # pragma: no cover
        raise NotImplementedError

    def namespace_of(self, info: ModuleInfo) -> dict[str, Value]:
        """The top-level classes and functions of a project module, by name."""
        names = self.namespaces.get(info)
        if names is None:
            names = self.namespaces[info] = {}
        return names

    def project_value(self, name: str, importer: ModuleInfo | None) -> Value | None:
        """What an imported name (`models.Net`, `.layers`) is in the project, or None when it is
        no project module or no class or function of one."""
        if self.project is None:
            return None
        memo = (name, id(importer))
        if memo in self.resolved:
            return self.resolved[memo]
        self.resolved[memo] = None
        found: Value | None = None
        level = len(name) - len(name.lstrip("."))
        dots, rest = name[:level], [p for p in name[level:].split(".") if p]
        # The longest prefix that is a module; the rest are attributes of it.
        for cut_at in range(len(rest), -1 if level else 0, -1):
            info = self.project.module(dots + ".".join(rest[:cut_at]), importer)
            if info is None:
                continue
            self.load_module(info)
            found = Value(Kind.UNKNOWN, ref=info, label=name)
            for attr in rest[cut_at:]:
                found = self.module_attribute(found.ref, attr) if isinstance(found.ref, ModuleInfo) else None
                if found is None:
                    break
            break
        self.resolved[memo] = found
        return found

    def star_value(self, name: str, stars: tuple[str, ...], importer: ModuleInfo | None) -> Value | None:
        """A name a module took with `from M import *`: the last such import that has it wins."""
        if name.startswith("_"):
            return None
        for star in reversed(stars):
            found = self.project_value(f"{star}.{name}" if not star.endswith(".") else f"{star}{name}", importer)
            if found is not None:
                return found
        return None

    def module_attribute(self, info: ModuleInfo, attr: str) -> Value | None:
        """`module.attr` for a project module: its class or function, or what it imported."""
        value = self.namespace_of(info).get(attr)
        if value is not None:
            return value
        imported = info.imports.get(attr)
        if imported is not None:
            return self.project_value(imported, info)
        starred = self.star_value(attr, info.stars, info)
        if starred is not None:
            return starred
        # A submodule of a package (`pkg.models` after `import pkg`).
        return self.project_value(f".{attr}", info) if info.path.endswith("__init__.py") else None

    def attribute_roles(self, info: ClassInfo) -> dict[str, Role]:
        """What the methods of a class use each `self.<attr>` as (`evidence.py`)."""
        roles = self.class_roles.get(info.name)
        if roles is None:
            roles = {}
            for method in info.methods.values():
                node = method.node
                if not isinstance(node, cst.FunctionDef) or not node.params.params:
                    continue
                me = node.params.params[0].name.value
                for chain, role in roles_in(node.body, self.imports).items():
                    head, _, attr = chain.partition(".")
                    if head == me and attr and "." not in attr and attr not in info.methods:
                        roles.setdefault(attr, role)
            self.class_roles[info.name] = roles
        return roles

    def assigned_class(self, info: ClassInfo, name: str) -> tuple[ClassInfo, str] | None:
        """The one project class whose objects the methods of a class (and of its bases) construct
        into `self.<name>`, with where that object lives (`allocation`'s `Class.name`); None when
        they construct none, or objects of several classes."""
        key = (info.key, name)
        if key in self.class_made:
            return self.class_made[key]
        found: set[tuple[int, str]] = set()
        classes: dict[int, ClassInfo] = {}
        for current in self.class_and_bases(info):
            for func in _self_constructions(current.node).get(name, ()):
                text = dotted(func)
                made = [c for c in self.classes.values() if text is not None and c.named_by((text,))]
                if len(made) != 1:
                    found.add((0, ""))  # something else, or a class not known by that name alone
                    continue
                classes[id(made[0])] = made[0]
                found.add((id(made[0]), f"{current.name}.{name}"))
        result = None
        if len(found) == 1 and (only := next(iter(found)))[0] in classes:
            result = (classes[only[0]], only[1])
        self.class_made[key] = result
        return result

    def assigned_attributes(self, info: ClassInfo) -> frozenset[str]:
        """The attributes the methods of a class and of its known base classes assign on `self`."""
        found = self.class_assigned.get(info.key)
        if found is None:
            names: set[str] = set()
            for current in self.class_and_bases(info):
                names |= _self_assignments(current.node)
            found = self.class_assigned[info.key] = frozenset(names)
        return found

    def class_and_bases(self, info: ClassInfo) -> list[ClassInfo]:
        """A class of the program and every base class of it the program defines."""
        found: list[ClassInfo] = []
        pending, seen = [info], set()
        while pending:
            current = pending.pop()
            if current.key in seen:
                continue
            seen.add(current.key)
            found.append(current)
            pending.extend(c for c in self.classes.values() if c.named_by(current.bases))
        return found

    def unseen_base(self, info: ClassInfo) -> bool:
        """Whether a class, or a base class of it, names a base that is neither a class the analysis
        sees nor a library module class (whose attributes are known to be its parameters)."""
        found = self.class_unseen.get(info.key)
        if found is None:
            found = False
            pending, seen = [info], set()
            while pending and not found:
                current = pending.pop()
                if current.key in seen:
                    continue
                seen.add(current.key)
                for base in current.bases:
                    bases = [c for c in self.classes.values() if c.named_by((base,))]
                    if bases:
                        pending.extend(bases)
                    elif not ((fact := lookup(base)) is not None and fact.plain_base) \
                            and makes(base) is not Returns.MODULE and base not in K.LIGHTNING_MODULES:
                        found = True
            self.class_unseen[info.key] = found
        return found

    def running_scope(self, frame: Frame) -> cst.FunctionDef | cst.Module | None:
        """The function (or module) whose code `frame` runs; None for a lambda."""
        scope = frame.function.node if frame.function is not None else self.module_node
        return scope if isinstance(scope, (cst.FunctionDef, cst.Module)) else None

    def checked_names(self, frame: Frame) -> Bindings:
        """The names of the running scope whose unbound read is sure to fail (`scopes.py`)."""
        scope = self.running_scope(frame)
        if scope is None:
            return _NO_BINDINGS
        names = self.scope_names.get(scope)
        if names is None:
            names = self.scope_names[scope] = checked_locals(scope)
        return names

    def bound_in_another_world(self, name: str, state: State, frame: Frame) -> bool:
        """Every assignment that could have bound the local `name` sits in an `if` arm this path
        has decided the other way, on a test no assignment in the running loop changes: the value
        can only come from an earlier iteration that took the arm, which this iteration would have
        taken too. The path is one where the name was never bound (a NameError first), even when
        forgetting conditions joined it with the paths that took the arm."""
        defs = state.defs[-1].get(name)
        if not defs or name in frame.global_names:
            return False
        scope = self.running_scope(frame)
        if scope is None:
            return False
        where = self.placements.get(scope)
        if where is None:
            where = self.placements[scope] = placement(scope)
        outer = frame.loops[0]
        for statement in defs:
            arms = where.guards.get(statement)
            if not arms or outer not in where.loops.get(statement, ()):
                return False
            if not any(self.decide(test, state) is (not truth) and self.invariant_in(test, outer)
                       for test, truth in arms):
                return False
        return True

    def attribute_set_in_another_world(self, key: tuple[str, str], state: State, frame: Frame) -> bool:
        """`bound_in_another_world` for an attribute of an object read in one of its methods: every
        statement that assigned it sits in this method, in an `if` arm this path has decided the
        other way on a test of the object's own settings (`object_condition`), which keeps its truth
        from call to call. The value can only come from a call that took the arm, which this call
        would have taken too: on this path the attribute was never set."""
        defs = state.hdefs.get(key)
        if not defs or not state.assume:
            return False
        scope = self.running_scope(frame)
        if not isinstance(scope, cst.FunctionDef):
            return False
        where = self.placements.get(scope)
        if where is None:
            where = self.placements[scope] = placement(scope)
        for statement in defs:
            arms = where.guards.get(statement)
            if not arms:
                return False
            if not any(self.decide(test, state) is (not truth) and self.persists(test, state, frame)
                       for test, truth in arms):
                return False
        return True

    def persists(self, test: cst.BaseExpression, state: State, frame: Frame) -> bool:  # pragma: no cover
        raise NotImplementedError

    def invariant_in(self, test: cst.BaseExpression, loop: cst.CSTNode) -> bool:
        """No assignment inside `loop` changes a name or attribute chain `test` reads."""
        found = self.invariant_tests.get((test, loop))
        if found is None:
            assigned = self.loop_names.get(loop)
            if assigned is None:
                assigned = self.loop_names[loop] = assigned_in(loop)
            reads = {text for chain in chains_of(test) if (text := dotted(chain)) is not None}
            found = self.invariant_tests[(test, loop)] = not any(
                chains_overlap(read, a) for read in reads for a in assigned)
        return found

    def hold(self, value: Value, state: State) -> str | None:
        """Keep a graph value computed but not yet used (the left operand while the right one runs,
        `model(a) + model(b)`) where the state sees it: its nodes are alive until it is used."""
        if not value.nodes:
            return None
        self.pending += 1
        slot = f"{PENDING}{self.pending}"
        state.frames[-1][slot] = value
        return slot

    def unhold(self, slot: str | None, value: Value, mark: int, state: State) -> Value:
        """The value `hold` kept, as the code run since left it (aged where its sites ran again)."""
        if slot is not None:
            for frame_values in reversed(state.frames):
                if slot in frame_values:
                    frame_values.pop(slot)
                    break
        return self.refresh(value, mark, state)

    def refresh(self, value: Value, mark: int, state: State) -> Value:
        """`value`, read before the code since `mark` ran (an operand, a receiver, an earlier
        argument), with the node ids it holds aged as that code aged them in the state: in
        `outputs.append(model(x))` the items already in `outputs` are one iteration older once the
        call has run, not the call's new result."""
        if mark == len(self.renamed) or not value.nodes:
            return value
        first: dict[int, int] = {}
        for site, epoch in self.renamed[mark:]:
            if epoch < first.get(site, epoch + 1):
                first[site] = epoch
        for site, epoch in first.items():
            for _ in range(min(state.epochs.get(site, 0) - epoch, GENERATIONS - 1)):
                value = rename(value, site)
        return value

    def bound_elsewhere(self, name: str, state: State, frame: Frame) -> bool:
        """A name the interpreter knows by other means (an import, a builtin)."""
        return name in frame.imports or name in self.imports or name in builtin_names()

    def store_name(self, name: str, value: Value, state: State, frame: Frame, statement: cst.CSTNode) -> None:
        """Bind a variable in the right frame, remembering the statement that assigned it."""
        index = 0 if name in frame.global_names else len(state.frames) - 1
        state.frames[index][name] = value
        state.defs[index][name] = frozenset({statement})
        self.invalidate(state, name=name, index=index)

    def note_reset(self, target: cst.BaseExpression, value: Value, state: State, frame: Frame,
                   source: cst.CSTNode | None = None) -> None:
        """A container emptied inside a loop (`xs = []`, `del xs[:]`), or built anew there from this
        iteration's values (`h_list = [x]` in a forward the loop calls), and a tensor made there
        without a graph (`out = torch.zeros(...)`, its slots written next), do not grow across it."""
        elements = source.elements if isinstance(source, (cst.List, cst.Dict)) else ()
        built = bool(isinstance(source, (cst.List, cst.Dict)) and not any(
            isinstance(e, (cst.StarredElement, cst.StarredDictElement)) for e in elements))
        fresh_tensor = value.kind is Kind.TENSOR and not value.nodes and isinstance(source, cst.Call)
        if frame.loops and (fresh_tensor or (value.kind in (Kind.LIST, Kind.DICT) and (built or not value.nodes))):
            holder = self.holder_of(target, state, frame)
            if holder is not None:
                self.reset_holders.add(holder.key)

    def note_tensor_alias(self, name: str, value: Value, source: cst.CSTNode | None, state: State,
                          frame: Frame, statement: cst.CSTNode) -> None:
        """`buf = self.buf`: the name holds the very tensor the attribute holds, as long as the
        statement that bound it so is among the name's definitions on the path (a write in place
        through the name adds its statement; a rebinding replaces them)."""
        if value.kind is not Kind.TENSOR or not isinstance(source, cst.Attribute):
            return
        holder = self.holder_of(source, state, frame)
        if holder is not None and holder.kind == "attribute" and state.heap.get(holder.key) is value:  # type: ignore[arg-type]
            frame.tensor_aliases[name] = (holder, statement)

    def write_through_alias(self, name: str, value: Value, state: State, frame: Frame,
                            statement: cst.CSTNode) -> None:
        """A tensor changed in place through a local name (`buf[t] = out`) that holds an attribute's
        tensor: the attribute's tensor is the one changed, if both still hold it on this path."""
        holder = self.aliased(name, state, frame)
        if holder is None:
            return
        key = holder.key
        self.touch(key)  # type: ignore[arg-type]
        state.heap[key] = value  # type: ignore[index]
        state.hdefs[key] = state.hdefs.get(key, frozenset()) | {statement}  # type: ignore[index,arg-type]
        frame.tensor_aliases[name] = (holder, statement)  # the name's definition from here on

    def tensor_holder(self, expr: cst.BaseExpression, state: State, frame: Frame) -> Holder | None:
        """The place a tensor an expression names is held: the attribute a local name stands for
        (`buf = self.buf`), else the name's own."""
        holder = self.holder_of(expr, state, frame)
        if holder is not None and holder.kind == "variable" and frame.tensor_aliases:
            return self.aliased(holder.key[0], state, frame) or holder
        return holder

    def aliased(self, name: str, state: State, frame: Frame) -> Holder | None:
        """The attribute whose tensor a local name holds on this path (`buf = self.buf`), if both
        still hold it."""
        alias = frame.tensor_aliases.get(name)
        if alias is None:
            return None
        holder, bound = alias
        index = len(state.frames) - 1
        return holder if bound in state.defs[index].get(name, frozenset()) else None

    def store_in_place(self, target: cst.BaseExpression, value: Value, state: State, frame: Frame,
                       statement: cst.CSTNode) -> None:
        """A container changed in place (`xs.append(v)`): update it where the name lives."""
        self.note_reset(target, value, state, frame)
        if isinstance(target, cst.Name):
            self.write_through_alias(target.value, value, state, frame, statement)
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
                self.invalidate(state, name=name, index=index)
                return
        self.assign(target, value, state, frame, statement, None, rebinds=False)

    def forget(self, name: str, state: State, frame: Frame) -> None:
        """A name now means something the model does not follow (an import, a `del`)."""
        index = 0 if name in frame.global_names else len(state.frames) - 1
        state.frames[index].pop(name, None)
        state.defs[index].pop(name, None)
        self.invalidate(state, name=name, index=index)

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
        self.touch(holder.key)  # type: ignore[arg-type]
        return state.hdefs.get(holder.key, frozenset())  # type: ignore[arg-type]

    def qualified(self, expr: cst.BaseExpression, state: State, frame: Frame) -> str | None:
        """The qualified name of an imported callable, unless a variable shadows it."""
        head = expr
        while isinstance(head, cst.Attribute):
            head = head.value
        if isinstance(head, cst.Name) and self.lookup(head.value, state, frame) is not None:
            return None
        name = qualify(expr, frame.imports) or qualify(expr, self.imports)
        if name is None and isinstance(expr, cst.Name) and expr.value in builtin_names():
            return expr.value
        if name is not None and self.project is not None and self.project_value(name, frame.module) is not None:
            return None
        return canonical(name) if name is not None else None

    # -- assignment ------------------------------------------------------------------------

    def assign(self, target: cst.BaseExpression, value: Value, state: State, frame: Frame,
               statement: cst.CSTNode, source: cst.CSTNode | None, *, rebinds: bool = True) -> None:
        """Bind `value` to an assignment target (names, attributes, subscripts, tuples); `rebinds`
        False for a tensor changed in place (`store_in_place`): still the same tensor."""
        if rebinds and self.saved_by and isinstance(target, (cst.Name, cst.Attribute)):
            # Another tensor now: what nodes kept of the one it held is no longer written through it.
            holder = self.holder_of(target, state, frame)
            if holder is not None:
                self.saved_by.pop(scoped_key(holder, frame), None)
        if value.kind is Kind.MODULE and value.alloc is None and isinstance(source, cst.Call) \
                and isinstance(target, (cst.Name, cst.Attribute)):
            # A library module a factory made (`teacher = make_model()`): it lives where it is assigned.
            value = replace(value, alloc=self.allocation(source, frame))
        if rebinds and bare(value) and isinstance(target, (cst.Name, cst.Attribute)):
            held = self.peek(target, state, frame)
            if held is not None and held.kind in (Kind.MODULE, Kind.INSTANCE):
                # A model rebound to what an unseen call gives (`net, _ = torch.load(path)`,
                # `model = amp.initialize(model)`): the same kind of model, the one the code made.
                value = held
        if isinstance(target, (cst.Name, cst.Attribute)):
            self.note_reset(target, value, state, frame, source)
            holder = self.holder_of(target, state, frame)
            if holder is not None and value.kind is Kind.NONE:
                self.none_assigned.add(holder.key)
            elif holder is not None:
                items = value.items if value.kind in (Kind.LIST, Kind.DICT) else None
                key = (id(self.entry_owner), holder.key)
                known = self.assigned_items.get(key, "")
                self.assigned_items[key] = items if known in ("", items) else known if items == "" else None
                container = _CONTAINER_NAMES.get(value.kind)
                if self.assigned_containers.get(key, container) != container:
                    container = None
                self.assigned_containers[key] = container
        if isinstance(target, cst.Name):
            if rebinds:
                self.note_tensor_alias(target.value, value, source, state, frame, statement)
            else:
                self.write_through_alias(target.value, value, state, frame, statement)
            self.store_name(target.value, value, state, frame, statement)
            if value.kind is Kind.UNKNOWN and value.qual is not None and self.option_domains:
                parsed = lookup(value.qual)
                if parsed is not None and parsed.holds_options:
                    self.assume_options(target.value, state)
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
                    part = value
                elif value.kind is Kind.TUPLE and isinstance(value.ref, Value) and value.ref.kind is Kind.TUPLE:
                    part = value.ref  # `states, actions = zip(*batch)`: each a tuple of the items' parts
                else:
                    part = Value(Kind.UNKNOWN, value.nodes, value.top, value.grad, via=value.via)
                self.assign(inner, part, state, frame, statement, source, rebinds=rebinds)
        elif isinstance(target, cst.Attribute):
            owner = self.eval(target.value, state, frame)
            self.invalidate(state, text=dotted(target))
            first, root = target, target.value
            while isinstance(root, cst.Attribute):
                first, root = root, root.value
            if first is not target and isinstance(root, cst.Name):
                # `self.opt.gan_type = ...`: what tests of the object's settings assumed changes.
                instance = self.lookup(root.value, state, frame)
                if instance is not None and instance.kind is Kind.INSTANCE and isinstance(instance.ref, ClassInfo):
                    self.invalidate(state, heap=(heap_owner(instance), first.attr.value))
            if owner.kind is Kind.INSTANCE and isinstance(owner.ref, ClassInfo):
                # (An object of one of several classes: set on each, whichever it is.)
                flag = _flag_of(source, state, self)
                for member in members(owner):
                    key = (heap_owner(member), target.attr.value)
                    self.invalidate(state, heap=key)
                    self.touch(key, (f"{FLAG}{heap_owner(member)}", target.attr.value))
                    state.heap[key] = value
                    state.hdefs[key] = frozenset({statement})
                    # `self.learned_freq = learned_freq` with a literal flag: what `if self.learned_freq:`
                    # in any method of the object finds. Any other value is recorded too (paths where
                    # the attribute holds something else must not join into the flag).
                    state.heap[(f"{FLAG}{heap_owner(member)}", target.attr.value)] = (  # type: ignore[index]
                        NOT_A_FLAG if flag is None else TRUE_FLAG if flag else FALSE_FLAG)
                if target.attr.value in K.MANUAL_FLAGS \
                        and not (isinstance(source, cst.Name) and source.value == "True"):
                    owner.ref.manual_optimization = True
            elif target.attr.value == "requires_grad":
                holder_value = self.peek(target.value, state, frame)
                if holder_value is not None:
                    if isinstance(source, cst.Name) and source.value == "False":
                        self.freeze(holder_value, dotted(target.value), state, frame)
                    else:
                        if isinstance(source, cst.Name) and source.value == "True":
                            self.unfreeze(holder_value, dotted(target.value), state, frame)
                        state.replace_everywhere(holder_value, replace(holder_value, grad=True))
            else:
                if value.nodes:
                    self.escaped.update(value.nodes)
                if isinstance(source, (cst.Name, cst.Attribute)) and owner.kind is Kind.MODULE:
                    self.tie(target, source, state, frame)
                text = dotted(target)
                if text is not None and opaque_object(owner) and _kept_on_an_object(value):
                    # Data kept on an object whose class is not seen (`policy.saved_log_probs`,
                    # `memory.states`): what the program stores there, it reads back.
                    key = state.opaque_key(text)
                    self.touch(key)
                    state.heap[key] = value  # type: ignore[index]
                    state.hdefs[key] = frozenset({statement})  # type: ignore[index]
        elif isinstance(target, cst.Subscript):
            container = self.eval(target.value, state, frame)
            if container.kind is Kind.SCALAR:
                return  # an item of a numpy array or a number: the tensor stored is converted
            if container.kind is Kind.TENSOR:
                holder = self.tensor_holder(viewed_base(target.value), state, frame)
                if holder is not None:
                    self.modified_in_place(holder, target, state, frame)
                # `self.ema[idx] = ...` writes into the tensor in place: its history goes on, joined
                # with what is written (a tensor, not a list of what was stored).
                if value.nodes or container.nodes:
                    # What is written, read where the statement names it (`self.bank[idx] = feats`).
                    written_expr = source if isinstance(source, cst.BaseExpression) else None
                    written = self.derive(target, [(target.value, container), (written_expr, value)], state, frame,
                                          in_place=True)
                    self.store_in_place(target.value, written, state, frame, statement)
                    if holder is not None and value.nodes and not state.no_grad:
                        self.grown_holders.add(holder.key)
                return
            index = target.slice[0].slice.value if len(target.slice) == 1 \
                and isinstance(target.slice[0].slice, cst.Index) else None
            key = _string_key(index) if index is not None else None
            if key is None and isinstance(index, cst.Name) and index.value in frame.captured:
                # A closure's own constant (`self.features[name] = output` in the hook made for
                # `name`): each of its runs writes the same entry again.
                key = f"<captured {index.value}>"
            if key is None and isinstance(index, cst.Name):
                key = self.each_key(index.value, frame)
            if container.kind is Kind.DICT and container.keys is not None and container.elems is not None \
                    and key is not None:
                # `feats["a"] = out` on a dict whose keys are known: that entry is replaced, not added to.
                keys, elems = list(container.keys), list(container.elems)
                if key in keys:
                    elems[keys.index(key)] = value
                else:
                    keys.append(key)
                    elems.append(value)
                updated = replace(self.container_of(Kind.DICT, elems), elems=tuple(elems), keys=tuple(keys))
            else:
                updated = self.container_add(container, value)
                if container.kind is Kind.LIST and isinstance(index, cst.Name):
                    # The item at `i` is replaced: read back at the same `i`, it is `value` alone
                    # (an item at another index may be this one: what was kept of them is not).
                    binding = self.binding_of(index.value, state, frame)
                    updated = replace(updated, indexed=((index.value, binding, value),) if binding else ())
                elif updated.indexed:
                    updated = replace(updated, indexed=())
            self.store_in_place(target.value, updated, state, frame, statement)
        elif isinstance(target, cst.StarredElement):
            self.assign(target.value, value, state, frame, statement, source, rebinds=rebinds)

    def assume_options(self, name: str, state: State) -> None:
        """`args = parser.parse_args()`: each option declared with choices holds one of its values
        (`args.model in {"LSTM", "GRU"}`), until the program assigns it, so a chain of tests that
        covers them all leaves no path past its last arm."""
        for stored, values in self.option_domains.items():
            if values is None:
                continue
            subject = f"{name}.{stored}"
            self.atom_seq += 1
            state.assume[OPTION_ATOM + subject] = Atom(
                OPTION_ATOM + subject, True, frozenset({subject}), frozenset(), len(state.frames), self.atom_seq,
                f"{subject} in {sorted(values)}", (subject, values, True))

    def binding_of(self, name: str, state: State, frame: Frame) -> frozenset[cst.CSTNode] | None:
        """The statements that last bound a variable, as the frame holding it records them (the
        very object: a new binding is a new one), or None when it is not bound here."""
        if name in frame.global_names or name not in state.frames[-1]:
            return state.defs[0].get(name) if name in state.frames[0] else None
        return state.defs[-1].get(name)

    def each_key(self, name: str, frame: Frame) -> str | None:
        """The key of the entries `d[name] = v` writes when `name` runs over the same fixed items in
        every iteration of the loops around (`for name in names:` inside the training loop): the
        entries one iteration writes, the next writes again, so each write replaces its entry rather
        than adding to what the dict held (the loop runs at least once, as `run_loop` assumes).
        None when the items may differ from one iteration to the next."""
        for position in range(len(frame.loops) - 1, -1, -1):
            loop = frame.loops[position]
            if isinstance(loop, cst.For) and name in _names_bound(loop.target):
                break
        else:
            return None
        fixed = self.each_keys.get((loop, frame.loops[0]))
        if fixed is None:
            if _literal_items(loop.iter):
                fixed = True
            elif position == 0 or not _pure_iteration(loop.iter):
                # The outermost loop of its function: another call may iterate other items.
                fixed = False
            else:
                body = self.loop_names.get(loop.body)
                if body is None:
                    body = self.loop_names[loop.body] = assigned_in(loop.body)
                fixed = name not in body and self.invariant_in(loop.iter, frame.loops[0])
            self.each_keys[(loop, frame.loops[0])] = fixed
        return f"<each {name} in {self.code_of(loop.iter)}>" if fixed else None

    # -- expressions -----------------------------------------------------------------------

    def eval(self, expr: cst.BaseExpression, state: State, frame: Frame) -> Value:
        """The abstract value of an expression (may change `state`: calls have effects)."""
        node_type = type(expr)  # libcst's node classes are ABCs: `isinstance` on each is slow
        if node_type is cst.Name:
            if expr.value == "None":
                return NONE
            if expr.value in ("True", "False"):
                return SCALAR
            value = self.lookup(expr.value, state, frame)
            if value is not None and state.assume and frame.loops \
                    and self.bound_in_another_world(expr.value, state, frame):
                state.dead = True
                return UNKNOWN
            if value is None:
                imported = frame.imports.get(expr.value) or self.imports.get(expr.value)
                if imported is not None and self.project is not None:
                    found = self.project_value(imported, frame.module)
                    if found is not None:
                        return found
                if imported is None and self.project is not None:
                    stars = frame.module.stars if frame.module is not None else self.stars
                    found = self.star_value(expr.value, stars, frame.module)
                    if found is not None:
                        return found
                reference = self.api_reference(expr, state, frame)
                if reference is not None:
                    return reference
                if self.checked_names(frame).unbound_read_fails(expr.value, self.statement(frame)) \
                        and not self.bound_elsewhere(expr.value, state, frame):
                    # Unbound on this path: the program would stop with a NameError first.
                    state.dead = True
                return UNKNOWN
            return value
        if node_type is cst.Attribute:
            reference = self.api_reference(expr, state, frame)
            if reference is not None:
                return reference
            owner = self.eval(expr.value, state, frame)
            result = self.attribute_value(owner, expr, state, frame)
            if result.nodes and owner.nodes and result.kind is not Kind.INSTANCE and owner.kind is not Kind.INSTANCE:
                # A view of a tensor (`x.T`, `out.logits`): reads of it are reads of `x`.
                via = tuple(self.reads_of([(expr.value, owner)], state, frame, None))
                if via:
                    result = replace(result, via=via)
            return result
        if node_type is cst.Call:
            return self.eval_call(expr, state, frame)
        if node_type in (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString,
                              cst.ConcatenatedString, cst.FormattedString, cst.Ellipsis):
            if isinstance(expr, cst.FormattedString):
                for part in expr.parts:
                    if isinstance(part, cst.FormattedStringExpression):
                        self.eval(part.expression, state, frame)
            return SCALAR
        if node_type is cst.BinaryOperation:
            left = self.eval(expr.left, state, frame)
            mark = len(self.renamed)
            slot = self.hold(left, state)
            right = self.eval(expr.right, state, frame)
            left = self.unhold(slot, left, mark, state)
            if left.kind in (Kind.LIST, Kind.TUPLE) and isinstance(expr.operator, cst.Add):
                return self.container_add(left, right)
            if isinstance(expr.operator, cst.Multiply) and Kind.LIST in (left.kind, right.kind):
                # `[h0] * layers`: the same items, repeated.
                return left if left.kind is Kind.LIST else right
            return self.derive(expr, [(expr.left, left), (expr.right, right)], state, frame)
        if node_type is cst.UnaryOperation:
            operand = self.eval(expr.expression, state, frame)
            if isinstance(expr.operator, cst.Not):
                return SCALAR
            return self.derive(expr, [(expr.expression, operand)], state, frame)
        if node_type is cst.BooleanOperation:
            left = self.eval(expr.left, state, frame)
            right = self.eval(expr.right, state, frame)
            return join(left, right)
        if node_type is cst.Comparison:
            self.eval(expr.left, state, frame)
            for comparison in expr.comparisons:
                self.eval(comparison.comparator, state, frame)
            return SCALAR
        if node_type is cst.Subscript:
            return self.eval_subscript(expr, state, frame)
        if node_type in (cst.Tuple, cst.List, cst.Set):
            kind = Kind.TUPLE if isinstance(expr, cst.Tuple) else Kind.LIST
            values = []
            via: list[Read] = []
            slots: list[str | None] = []
            marks: list[int] = []
            for element in expr.elements:
                inner = self.eval(element.value, state, frame)
                via.extend(self.reads_of([(element.value, inner)], state, frame, None))
                values.append(inner)
                marks.append(len(self.renamed))
                slots.append(self.hold(inner, state))  # alive while the next items run
            # Each item as the items after it left it (`(enc(a), enc(b))`: the first is one call older).
            values = [self.unhold(slot, value, mark, state) for slot, value, mark in zip(slots, values, marks,
                                                                                       strict=True)]
            exact = not any(isinstance(e, cst.StarredElement) for e in expr.elements)
            result = self.container_of(kind, values, exact=exact)
            if isinstance(expr, cst.List) and exact and all(v.kind in _OBJECTS for v in values):
                # `[net_g, net_d, net_dur]` handed to a function that unpacks it: which object is where
                # (appending objects keeps them, see `container_add`; writing into it does not).
                result = replace(result, elems=tuple(values))
            return replace(result, via=tuple(via)) if via else result
        if node_type is cst.Dict:
            values = []
            keys: list[str] | None = []
            for element in expr.elements:
                if isinstance(element, cst.DictElement):
                    self.eval(element.key, state, frame)
                    key = _string_key(element.key)
                    keys = keys + [key] if keys is not None and key is not None else None
                else:
                    keys = None
                values.append(self.eval(element.value, state, frame))
            result = self.container_of(Kind.DICT, values)
            if keys is not None and len(set(keys)) == len(keys):
                result = replace(result, elems=tuple(values), keys=tuple(keys))
            return result
        if node_type in (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp):
            return self.eval_comprehension(expr, state, frame)
        if node_type is cst.IfExp:
            self.eval(expr.test, state, frame)
            decided = self.decided_test(expr.test, state, frame)
            if decided is not None:
                return self.eval(expr.body if decided else expr.orelse, state, frame)
            return join(self.eval(expr.body, state, frame), self.eval(expr.orelse, state, frame))
        if node_type is cst.Lambda:
            info = self.functions.get(expr)
            if info is None:
                info = FunctionInfo(expr, "<lambda>", nested=True)
                self.functions[expr] = info
            return Value(Kind.FUNCTION, ref=info)
        if node_type is cst.NamedExpr:
            value = self.eval(expr.value, state, frame)
            statement = frame.statements[-1][1] if frame.statements else expr
            self.assign(expr.target, value, state, frame, statement, expr.value)
            return value
        if node_type in (cst.Await, cst.Yield):
            inner = getattr(expr, "expression", None) or getattr(expr, "value", None)
            if isinstance(inner, cst.BaseExpression):
                return self.eval(inner, state, frame)
            return UNKNOWN
        if node_type is cst.StarredElement:
            return self.eval(expr.value, state, frame)
        return UNKNOWN

    def eval_subscript(self, expr: cst.Subscript, state: State, frame: Frame) -> Value:
        base = self.eval(expr.value, state, frame)
        sliced = all(isinstance(e.slice, cst.Slice) for e in expr.slice)
        if base.kind is Kind.MODULE and base.qual in K.MODULE_CONTAINERS and base.ref is None:
            # `self.layers[-1]`, `self.blocks[:-1]`, `self.heads["q"]` of a ModuleList, Sequential or
            # ModuleDict of library modules: one of the modules it holds, or a container of some.
            for element in expr.slice:
                part = element.slice
                bounds = (part.lower, part.upper, part.step) if isinstance(part, cst.Slice) else (part.value,)
                for bound in bounds:
                    if bound is not None:
                        self.eval(bound, state, frame)
            return base if sliced else Value(Kind.MODULE, label=indexed(expr))
        if base.kind in (Kind.LIST, Kind.TUPLE) and sliced:
            # `data[::-1]`, `items[1:]`: the same kind of container, holding some of the same items.
            for element in expr.slice:
                slice_ = element.slice
                assert isinstance(slice_, cst.Slice)
                for bound in (slice_.lower, slice_.upper, slice_.step):
                    if bound is not None:
                        self.eval(bound, state, frame)
            return replace(base, elems=None, keys=None)
        index: int | None = None
        for element in expr.slice:
            if isinstance(element.slice, cst.Index):
                self.eval(element.slice.value, state, frame)
                literal = element.slice.value
                key = _string_key(literal)
                if base.keys is not None and base.elems is not None and key in base.keys:
                    return base.elems[base.keys.index(key)]
                if isinstance(literal, cst.Integer):
                    index = int(literal.value)
                elif isinstance(literal, cst.UnaryOperation) and isinstance(literal.expression, cst.Integer):
                    index = -int(literal.expression.value)
        if base.elems is not None and index is not None and -len(base.elems) <= index < len(base.elems):
            return base.elems[index]
        member = self.member_of(base) if base.kind in (Kind.MODULE, Kind.LIST) else None
        if member is not None:
            # A list built of instances of one class (`self.q_nets.append(Mlp(...))`): any item is one.
            return member if index is not None or base.kind is Kind.LIST else replace(base, label=None)
        if base.kind is Kind.LIST and isinstance(base.ref, Value) and base.ref.kind in (Kind.OPTIMIZER, Kind.MODULE):
            return base.ref  # `self.q_optimizers[i]`
        if base.indexed and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index) \
                and isinstance(expr.slice[0].slice.value, cst.Name):
            name = expr.slice[0].slice.value.value
            binding = self.binding_of(name, state, frame)
            for stored_at, defs, item in base.indexed:
                if stored_at == name and defs is binding and binding is not None:
                    return item
        if base.kind in (Kind.LIST, Kind.TUPLE, Kind.DICT):
            return self.element_from(expr.value, base, state, frame)
        if base.kind is Kind.DATA:
            return base
        item = self.derive(expr, [(expr.value, base)], state, frame)
        key = _string_key(expr.slice[0].slice.value) if len(expr.slice) == 1 and isinstance(
            expr.slice[0].slice, cst.Index) else None
        if key is not None and base.top and item.top:
            self.keyed_items[next(iter(item.top)) // GENERATIONS] = (
                key, frozenset(node // GENERATIONS for node in base.top))
        return item

    def eval_comprehension(self, expr: cst.BaseExpression, state: State, frame: Frame) -> Value:
        scratch = state.copy()
        scratch.frames.append(dict(scratch.frames[-1]))
        scratch.defs.append(dict(scratch.defs[-1]))
        inner_frame = frame
        clause: cst.CompFor | None = expr.for_in  # type: ignore[attr-defined]
        while clause is not None:
            iterable = self.eval(clause.iter, scratch, inner_frame)
            objects = known_objects(iterable)
            if objects and clause.inner_for_in is None and not isinstance(expr, cst.DictComp):
                result = self.comprehension_of_objects(expr, clause, objects, scratch, inner_frame)
                scratch.frames.pop()
                scratch.defs.pop()
                self._adopt_effects(state, scratch)
                return result
            element = self.element_from(clause.iter, iterable, scratch, inner_frame)
            self.assign(clause.target, element, scratch, inner_frame, expr, clause.iter)
            for condition in clause.ifs:
                self.eval(condition.test, scratch, inner_frame)
            clause = clause.inner_for_in
        produced = expr.value if isinstance(expr, cst.DictComp) else expr.elt  # type: ignore[attr-defined]
        if isinstance(expr, cst.DictComp):
            self.eval(expr.key, scratch, inner_frame)
        element = self.eval(produced, scratch, inner_frame)
        if self.calls_in(produced) and not scratch.dead:
            # A second item, as a loop's next iteration (`[model(v) for v in views]`: the second call
            # meets what the first left, and the first item is one call older).
            mark, slot = len(self.renamed), self.hold(element, scratch)
            second = self.eval(produced, scratch, inner_frame)
            element = join(self.unhold(slot, element, mark, scratch), second)
        scratch.frames.pop()
        scratch.defs.pop()
        # Effects of calls inside the comprehension (backward calls, attribute writes) are kept.
        self._adopt_effects(state, scratch)
        kind = Kind.DICT if isinstance(expr, cst.DictComp) else Kind.LIST
        member = element if element.kind is Kind.INSTANCE else None
        return Value(kind, element.nodes, element.top, element.grad, ref=member,
                     items=add_item("", element))

    def comprehension_of_objects(self, expr: cst.BaseExpression, clause: cst.CompFor, objects: tuple[Value, ...],
                                 state: State, frame: Frame) -> Value:
        """`[m for m in net.modules() if hasattr(m, "reset")]`: the element made of each object in
        turn, left out where its condition is decided false, so that a loop over the result
        reaches each object kept (a spiking network's reset of its layers)."""
        kept: list[Value] = []
        for obj in objects:
            self.assign(clause.target, obj, state, frame, expr, clause.iter)
            wanted = True
            for condition in clause.ifs:
                self.eval(condition.test, state, frame)
                decided = self.decide(condition.test, state)
                if decided is None:
                    decided = self.attribute_test(condition.test, state, frame)
                if decided is False:
                    wanted = False
                    break
            if wanted:
                kept.append(self.eval(expr.elt, state, frame))  # type: ignore[attr-defined]
        result = replace(self.container_of(Kind.LIST, kept), elems=tuple(kept))
        return result if known_objects(result) else replace(result, elems=None)

    def calls_in(self, expr: cst.BaseExpression) -> bool:
        """Whether an expression calls anything (cached per node)."""
        found = self.calling.get(expr)
        if found is None:
            found = self.calling[expr] = next(nodes_of(expr, cst.Call), None) is not None
        return found

    def only_shown(self, expr: cst.BaseExpression, state: State, frame: Frame) -> bool:
        """Whether the statement only shows the value (a notebook's bare `w.grad`, `print(p.grad)`):
        looking at gradients is not using them."""
        statement = self.statement(frame)
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            else None
        if not isinstance(small, cst.Expr):
            return False
        if small.value is expr:
            return True
        if isinstance(small.value, cst.Call):
            name = self.qualified(small.value.func, state, frame)
            fact = lookup(name) if name is not None else None
            return fact is not None and fact.receiver is None and fact.returns is Returns.NONE and fact.stores is None
        return False

    @staticmethod
    def _adopt_effects(state: State, scratch: State) -> None:
        state.heap = scratch.heap
        state.hdefs = scratch.hdefs
        state.freed = scratch.freed
        state.epochs = scratch.epochs
        state.retained = scratch.retained
        for index in range(len(state.frames)):
            state.frames[index] = scratch.frames[index]

    def attribute_value(self, owner: Value, expr: cst.Attribute, state: State, frame: Frame) -> Value:
        """`owner.attr`: heap attributes of instances, `.data`/`.grad` cuts, views of tensors."""
        if owner.kind is Kind.INSTANCE and owner.others:
            # An object of one of several classes: what the attribute is on any of them.
            found: Value | None = None
            for member in members(owner):
                found = join(found, self.attribute_value(member, expr, state, frame))
            return found if found is not None else UNKNOWN
        name = expr.attr.value
        if isinstance(owner.ref, ModuleInfo):
            return self.module_attribute(owner.ref, name) or UNKNOWN
        if owner.kind is Kind.MODULE and any(attr == name for attr, *_ in owner.weights):
            return self.module_weight(owner, dotted(expr.value) or self.code_of(expr.value), name, expr, state,
                                      frame, forward=False)
        if owner.kind is Kind.MODULE and owner.qual is not None and owner.ref is None:
            made = lookup(owner.qual)
            if made is not None and name in made.parameters:
                # `emb.weight` of a library layer: a parameter (a leaf), unless the layer is frozen.
                module_label = dotted(expr.value)
                return Value(Kind.TENSOR, grad=not self.is_frozen(module_label, state), label=dotted(expr))
        if owner.kind is Kind.INSTANCE and isinstance(owner.ref, ClassInfo):
            value = self.attribute_of(owner, name, state)
            if value is not None and state.assume \
                    and self.attribute_set_in_another_world((heap_owner(owner), name), state, frame):
                state.dead = True  # an AttributeError first
                return UNKNOWN
            if value is not None:
                if value is UNKNOWN:
                    made = self.assigned_class(owner.ref, name)
                    if made is not None:
                        # Set from something unseen (`self.log_alpha = state_dict["log_alpha"]` on
                        # resume) where the class's code otherwise makes it one class's object
                        # (`self.log_alpha = Scalar(0.0)`): that object, as the code made it.
                        return Value(Kind.INSTANCE, ref=made[0], label=dotted(expr), alloc=made[1])
                    # Set from something the analysis does not see (a constructor's argument):
                    # what the class's methods use it as.
                    role = self.attribute_roles(owner.ref).get(name)
                    if role is not None:
                        return role_value(role, dotted(expr))
                return value
            method = self.method_of(owner.ref, name)
            if method is not None and method.accessor:
                # A property: its method runs on this read; a cached one is kept on the instance.
                result = self.call_function(method, [], {}, state, frame, owner, expr)
                if method.kept:
                    key = (heap_owner(owner), name)
                    self.touch(key)
                    state.heap[key] = result  # type: ignore[index]
                    statement = self.statement(frame)
                    if statement is not None:
                        state.hdefs[key] = frozenset({statement})  # type: ignore[index]
                    self.memoised.update((node, method) for node in result.nodes)
                return result
            if method is not None:
                return Value(Kind.FUNCTION, ref=method, label=dotted(expr), bound=owner)
            if name in K.MODULE_METHODS:
                return Value(Kind.FUNCTION, label=dotted(expr))
            if owner.ref.is_module and name != TRAINING:
                role = self.attribute_roles(owner.ref).get(name)
                if role is not None:
                    # Set where this path did not go (`self.optim` in `compile()`): what it is used as.
                    return role_value(role, dotted(expr))
                if name in self.assigned_attributes(owner.ref) or self.unseen_base(owner.ref):
                    # Set by code the analysis does not see (a base class in a file it cannot read).
                    return UNKNOWN
                own = attribute(name, Receiver.MODULE)
                if own is not None and own.returns is Returns.RECEIVER:
                    return owner
                if own is not None and own.container and own.returns is Returns.MODULE:
                    # `self._modules`: the modules it holds, by name.
                    children = self.submodules_of(owner, state, deep=False)
                    member = self.element_of(children) if children.elems else None
                    return Value(Kind.MODULE, qual=min(K.KEYED_MODULE_CONTAINERS), label=dotted(expr),
                                 ref=member if member is not None and member.kind is not Kind.UNKNOWN else None)
                # An attribute of a module that its code never sets: a parameter registered elsewhere.
                frozen = self.is_frozen(("class", owner.ref.key), state)
                return Value(Kind.TENSOR, grad=not frozen, label=dotted(expr))
            return UNKNOWN
        if opaque_object(owner):
            text = dotted(expr)
            kept = None
            if text is not None:
                key = state.opaque_key(text)
                self.touch(key)
                kept = state.heap.get(key)  # type: ignore[call-overload]
            if kept is not None:
                return kept
        if name == GRADIENT and not self.only_shown(expr, state, frame):
            for recorder in self.recorders:
                recorder.reads_grads = True
            state.note_grads_read()
        if name in ("data", GRADIENT, "shape", "dtype", "device", "requires_grad", "is_leaf", "ndim"):
            return FRESH if name in ("data", "grad") else SCALAR
        if owner.kind in (Kind.TENSOR, Kind.UNKNOWN) and (owner.nodes or owner.grad):
            # A view or a field of a model output (`out.logits`, `x.T`): same graph.
            return Value(Kind.UNKNOWN, owner.nodes, owner.top, owner.grad)
        text = dotted(expr)
        if text is not None and text in self.module_names:
            return Value(Kind.MODULE, label=text)
        if owner.kind is Kind.DATA:
            return owner
        return UNKNOWN

    def module_weight(self, module: Value, text: str | None, name: str, node: cst.CSTNode, state: State,
                      frame: Frame, forward: bool) -> Value:
        """A module attribute computed from its parameters (`weight` under a parametrization or the
        legacy weight_norm), read (`forward` False) or computed by a call of the module.

        A parametrization computes it again on every read, except inside `parametrize.cached()`,
        where the first one is kept for the whole block; the legacy hooks compute it in each forward
        (weight_norm also once when applied; spectral_norm leaves a copy without graph until the
        first forward), and a read hands out the last one."""
        when, parametrization, made = next((w, p, m) for attr, w, p, m in module.weights if attr == name)
        key = ("<weights>", f"{made}.{name}")
        self.touch(key)
        shown = f"{text}.{name}" if text is not None else name
        by_forward = when in (Computes.FORWARD, Computes.AFTER_FORWARD)
        kept_here = by_forward or bool(self.cached_blocks)
        if kept_here and not (forward and by_forward):
            kept = state.heap.get(key)  # type: ignore[call-overload]
            if kept is None and when is Computes.AFTER_FORWARD:
                return FRESH  # no forward yet: the copy the hooks left, without graph
            if kept is not None and kept is not UNKNOWN:
                if when is Computes.READ:
                    # Handed out again by the block, the graph of its first computation.
                    self.memoised.update((n, None) for n in kept.nodes)
                if kept.nodes:
                    # Where it was kept (the module's call reads it too): a read the user would name.
                    holder = Holder("attribute", key, shown)
                    read = Read(holder, kept.nodes, node, self.statement(frame), None, kept.top,
                                self.defs_of(holder, state, frame), tuple(frame.statements), frame.function)
                    kept = replace(kept, via=(read,))
                return kept
        leaf = Value(Kind.TENSOR, grad=True)
        method = self.method_of(parametrization.ref, FORWARD) \
            if parametrization is not None and isinstance(parametrization.ref, ClassInfo) else None
        if method is not None:
            value = self.call_function(method, [(None, leaf)], {}, state, frame, parametrization, node)
        else:
            value = self.derive(node, [(None, leaf)], state, frame, source=True)
        if kept_here:
            state.heap[key] = value  # type: ignore[index]
            statement = self.statement(frame)
            if statement is not None:
                state.hdefs[key] = frozenset({statement})  # type: ignore[index]
            if when is Computes.READ:
                self.cached_blocks[-1].add(key)
        return value

    # -- operations that build graph -----------------------------------------------------

    def grad_resets(self, frame: Frame) -> frozenset[str]:
        """What the running function's code calls `zero_grad()` on (cached per function)."""
        node = frame.function.node if frame.function is not None else self.module_node
        found = self.resets_by_function.get(node)
        if found is None:
            from gradguard.analysis.calls import grad_resets_in

            found = self.resets_by_function[node] = grad_resets_in(node)
        return found

    def enter_owner(self, label: str | None) -> None:
        """A method of the object called `label` starts running (see `owners`)."""
        label = label or ""
        outer = self.owner_paths[-1] if self.owner_paths else ""
        self.owners.append(label)
        self.owner_paths.append(self.seen_from_outside(label, outer))

    def leave_owner(self) -> None:
        self.owners.pop()
        self.owner_paths.pop()

    def outside_label(self, label: str) -> str:
        """`label` as the caller of the running methods would write it (`self.q` in a method of
        `main` is `main.q`)."""
        return self.seen_from_outside(label, self.owner_paths[-1] if self.owner_paths else "")

    @staticmethod
    def seen_from_outside(label: str, outer: str) -> str:
        if outer and outer != "self" and (label == "self" or label.startswith("self.")):
            return outer + label[len("self"):]
        return label

    def derive(self, node: cst.CSTNode, operands: Args, state: State, frame: Frame,
               source: bool = False, consumer: str | None = None, in_place: bool = False,
               keeps_weights: bool = True, keeps_result: bool = False, saves_operands: bool = True) -> Value:
        """The result of an operation on `operands`: a new graph node if any of them requires grad.
        `in_place`: the op writes into its first operand (whose old value its node does not keep).
        `keeps_weights` False: a module's node that keeps none of its parameters (a step of their
        optimizer does not change it). `keeps_result`: the node keeps its own output (`relu`,
        `softmax`): a later write into the result in place changes what it kept. `saves_operands`
        False: a node that keeps none of its inputs (an `nn.Sigmoid`: its output only)."""
        # A list of parameters handed to a function (an optimizer, clip_grad_norm_) is no graph.
        needs_grad = source or any(v.nodes or (v.grad and v.kind not in _CONTAINERS) for _, v in operands)
        if state.no_grad or not needs_grad:
            if any(v.kind is Kind.DATA for _, v in operands):
                return DATA
            kinds = {v.kind for _, v in operands}
            # Tensors with numbers (`torch.randn(n, d) * 0.1`, `F.normalize(t, dim=1)`): a tensor.
            return FRESH if Kind.TENSOR in kinds and kinds <= {Kind.TENSOR, Kind.SCALAR, Kind.NONE} else UNKNOWN
        site = self.site(node, frame)
        leaves = [expr for expr, v in operands if v.grad and not v.nodes and v.kind not in _CONTAINERS]
        if leaves and not source:
            # Made from a leaf that requires grad read directly (`x @ self.weight`): the object that
            # holds it, as written and as seen from outside the running methods (`leaf_owners`).
            held = {text.rsplit(".", 1)[0] if text is not None and "." in text else "?"
                    for text in (dotted(expr) if isinstance(expr, cst.BaseExpression) else None for expr in leaves)}
            outside = {owner: self.outside_label(owner) for owner in held if owner != "?"}
            # `self.weight` where no caller names `self` (a constructor's): whose is not known.
            held |= {seen if seen.split(".")[0] != "self" else "?" for seen in outside.values()}
            self.leaf_owners[site] = self.leaf_owners.get(site, frozenset()) | frozenset(held)
        if source or self.saves_tensors(node, state, frame):
            self.saving.add(site)
        saves = site in self.saving
        owners = frozenset({*self.owners, *self.owner_paths,
                            *([consumer, self.outside_label(consumer)] if consumer else [])}) \
            if source else frozenset()
        epoch = state.epochs.get(site, 0)
        if owners:
            # By evaluation count, not node id: paths run apart age node ids apart. A node that keeps
            # no weights (`keeps_weights`) is not changed by a step of their optimizer.
            if keeps_weights:
                self.note_evaluation(("calls", site, epoch + 1, owners))
            inner = self.outside_label(consumer) if consumer else (self.owner_paths[-1] if self.owner_paths else "")
            if inner and inner != "self":
                self.note_evaluation(("labels", site, epoch + 1, inner))
        # Another path (the other arm of an `if` both of whose arms run this code) already made
        # this evaluation's node: its origin is this one's too.
        sibling = self.origins.get(node_id(site)) if self.origin_epochs.get(site, 1) >= epoch + 1 else None
        if epoch:
            state.rename_site(site)
            self.renamed.append((site, epoch))
            self._age_origin(site, epoch + 1)
            operands = [(expr, rename(value, site)) for expr, value in operands]
        state.epochs[site] = epoch + 1
        if saves and saves_operands:
            # `x ** 2` keeps its base for its own gradient, whatever the exponent.
            base = isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Power)
            self.note_saved(operands[1:] if in_place else operands, site, source, state, frame, base)
        if keeps_result:
            count = state.epochs[site]
            self.note_evaluation(("made", (site, count), site, count))
        if operands and not in_place and self.makes_view(node, state, frame):
            base = self.made_root(operands[0][1], state)
            if base is not None:
                self.note_evaluation(("viewing", (site, state.epochs[site]), base))
        current = node_id(site)
        inputs = frozenset().union(*(v.nodes for _, v in operands))
        if not source and inputs and all(n // GENERATIONS in self.unsure for n in inputs):
            # Computed from graphs of objects only ever called, and from nothing else: as unsure.
            self.unsure.add(site)
        nodes = inputs | {current}
        reads = self.reads_of(operands, state, frame, consumer)
        parents = frozenset().union(*(v.top for _, v in operands))
        sites = {n // GENERATIONS for n in parents}
        for read in reads:
            sites.update(n // GENERATIONS for n in read.top)
        stamps = {site_: state.epochs.get(site_, 0) for site_ in sites}
        if sibling is not None and sibling.expr is node:
            self.origins[current] = Origin((sibling.reads + [r for r in reads if r not in sibling.reads])[:16],
                                           sibling.parents | parents, sibling.loops, node,
                                           {**stamps, **sibling.stamps}, sibling.owners | owners)
        else:
            self.origins[current] = Origin(reads, parents, tuple(frame.loops), node, stamps, owners)
        labels = {v.label for _, v in operands if v.label and v.nodes}
        # `torch.tanh(G(z))` still comes from `G`: a single producing module names the result.
        return Value(Kind.TENSOR, nodes, frozenset({current}), True,
                     label=labels.pop() if len(labels) == 1 and not source else None)

    def note_saved(self, operands: Args, site: int, source: bool, state: State, frame: Frame,
                   base: bool = False) -> None:
        """The tensors a new node of `site` keeps for its backward (an operand is kept when another
        one requires grad; a module keeps its inputs for its parameters' gradients; with `base`, the
        first operand is kept for its own), by the place they are held: an in-place write there later
        changes them under the node (`modified_in_place`)."""
        needs = [requires_grad(v) for _, v in operands]
        count = state.epochs.get(site, 0)
        for index, (expr, value) in enumerate(operands):
            if value.kind not in (Kind.TENSOR, Kind.UNKNOWN) \
                    or not (source or (base and index == 0 and needs[0])
                            or any(n for j, n in enumerate(needs) if j != index)):
                continue
            made = self.made_root(value, state)
            if made is not None:
                self.note_evaluation(("made", made, site, count))
            if expr is None:
                continue
            holder = self.holder_of(viewed_base(expr), state, frame)
            if holder is not None:
                self.note_evaluation(("by", scoped_key(holder, frame), site, count))
            kept = self.parameter_read(expr, value, state, frame)
            if kept is not None:
                self.note_evaluation(("by", kept, site, count))

    def parameter_read(self, expr: cst.BaseExpression, value: Value, state: State,
                       frame: Frame) -> tuple[str, str] | None:
        """Where an operand that is a project module's own parameter, read directly (`scale.log_alpha`,
        or `log_alpha()` whose forward returns it), is noted as kept: an optimizer step over the
        module's parameters changes it under the node that saved it (`optimizer_step`)."""
        if value.kind is not Kind.TENSOR or not value.grad or value.nodes:
            return None
        if isinstance(expr, cst.Attribute):
            module = self.peek(expr.value, state, frame)
        elif isinstance(expr, cst.Call) and not expr.args:
            module = self.peek(expr.func, state, frame)
        else:
            return None
        if module is None or module.kind is not Kind.INSTANCE or not isinstance(module.ref, ClassInfo) \
                or not module.ref.is_module:
            return None
        owner = heap_owner(module)
        if isinstance(expr, cst.Attribute):
            own = state.heap.get((owner, expr.attr.value)) is value  # type: ignore[call-overload]
        else:
            own = any(held is value for key, held in state.heap.items() if key[0] == owner)
        return (owner, PARAMETER_READ) if own else None

    def made_root(self, value: Value, state: State) -> tuple[int, int] | None:
        """The evaluation that made the tensor whose storage a tensor value is, seen through views:
        one for every node the value may be (`a[:, :c]` or `a[:, ::2]`, by which arm returned)."""
        if value.kind is not Kind.TENSOR or not value.top or len(value.top) > 4:
            return None
        roots = set()
        for node in value.top:
            made = _made_by_node(node, state)
            if made is None:
                return None
            roots.add(self.viewed(made))
        return roots.pop() if len(roots) == 1 else None

    def viewed(self, made: tuple[int, int]) -> tuple[int, int]:
        """The evaluation that made the tensor a view (of a view...) was taken of."""
        for _ in range(16):
            base = self.view_bases.get(made)
            if base is None or base == made:
                break
            made = base
        return made

    def makes_view(self, node: cst.CSTNode, state: State, frame: Frame) -> bool:
        """Whether an operation's result is a view of its first operand: basic indexing (`z[:, :c]`)
        or an op the facts say returns one (`chunk`, `view`, `transpose`, `narrow`)."""
        if isinstance(node, cst.Subscript):
            return viewed_base(node) is not node
        if not isinstance(node, cst.Call):
            return False
        if isinstance(node.func, cst.Attribute):
            called = method(node.func.attr.value, Receiver.TENSOR)
            if called is not None and called.returns is Returns.VIEW:
                return True
        name = self.qualified(node.func, state, frame)
        fact = lookup(name) if name is not None else None
        return fact is not None and fact.returns is Returns.VIEW

    def note_saved_parameters(self, key: HeapKey | None, site: int, state: State) -> None:
        """A module call's node keeps the parameters of the module (and of the objects whose forward
        runs it), keyed as `CallEvaluation.parameters_key` keys them."""
        count = state.epochs.get(site, 0)
        for held in ([key] if key is not None else []) + self.modules_running:
            self.note_evaluation(("by", held, site, count))

    def tie(self, target: cst.Attribute, source: cst.BaseExpression, state: State, frame: Frame) -> None:
        """`self.out.weight = self.embed.weight` (tied weights): one tensor, held at both places. Each
        module's calls keep it, and a write through either place changes it."""
        module, mine, theirs = (self.holder_of(target.value, state, frame), self.holder_of(target, state, frame),
                                self.holder_of(source, state, frame))
        if module is None or mine is None or theirs is None:
            return
        shared = {scoped_key(mine, frame), scoped_key(theirs, frame)}
        self.tied.setdefault(scoped_key(module, frame), set()).update(shared)
        if isinstance(source, cst.Attribute):
            other = self.holder_of(source.value, state, frame)
            if other is not None:
                self.tied.setdefault(scoped_key(other, frame), set()).update(shared)
        for key in shared:
            self.aliases.setdefault(key, set()).update(shared - {key})

    def note_saved_tied(self, call: cst.Call, state: State, frame: Frame) -> None:
        """A module call keeps its weights: those set to another module's tensor (`self.out.weight =
        self.embed.weight`, tied weights) are that tensor."""
        if not self.tied:
            return
        module = self.holder_of(call.func, state, frame)
        tied = self.tied.get(scoped_key(module, frame)) if module is not None else None
        if tied:
            site = self.site(call, frame)
            for key in tied:
                self.note_evaluation(("by", key, site, state.epochs.get(site, 0)))

    def set_training(self, module: Value, mode: bool, state: State) -> None:
        """A project module (and every project module below it) is in training mode or not from here:
        what its code tests as `self.training` (`TRAINING`) is decided on this path."""
        for held in [module, *(self.submodules_of(module, state, deep=True).elems or ())]:
            if held.kind is not Kind.INSTANCE or not isinstance(held.ref, ClassInfo) or not held.ref.is_module:
                continue
            owner = heap_owner(held)
            self.invalidate(state, heap=(owner, TRAINING))
            self.touch((f"{FLAG}{owner}", TRAINING))
            state.heap[(f"{FLAG}{owner}", TRAINING)] = TRUE_FLAG if mode else FALSE_FLAG  # type: ignore[index]

    def modified_in_place(self, holder: Holder, call: cst.CSTNode, state: State, frame: Frame) -> None:
        """The tensor held at `key` is written in place by `call` (its version changes): the nodes
        still alive that kept it for their backward fail when a backward reaches them
        ("modified by an inplace operation"), as after an optimizer step (`Freed.by_step`)."""
        key = scoped_key(holder, frame)
        marks = set(self.saved_by.get(key, ()))
        for alias in self.aliases.get(key, ()):
            marks |= self.saved_by.get(alias, set())
        held_value = self.lookup(holder.key[0], state, frame) if holder.kind == "variable" \
            else state.heap.get(holder.key)  # type: ignore[arg-type]
        made = self.made_root(held_value, state) if held_value is not None else None
        if made is not None:
            marks |= self.saved_made.get(made, set())
        if not marks or state.dead:
            return
        held = state.held_nodes()
        touched = []
        for site, count in marks:
            generation = state.epochs.get(site, 0) - count
            if not 0 <= generation < GENERATIONS - 1:
                continue  # the summary generation stands for many evaluations: no evidence
            node = node_id(site, generation)
            if node in held and node not in state.freed:
                touched.append(node)
        if not touched:
            return
        info = self.call_info(call, CallKind.STEP, None, False, False, frame)
        why = Freed(info, conditions=tuple(frame.conditions), assumed=self.invariant_assumptions(state, frame),
                    by_step=True, written=holder)
        self.frees += 1
        for node in touched:
            state.freed[node] = why

    def element_from(self, expr: cst.BaseExpression, iterable: Value, state: State, frame: Frame) -> Value:
        """An element of an iterable, remembering which container it was taken from."""
        element = self.element_of(iterable)
        if not element.nodes:
            return element
        via = tuple(self.reads_of([(expr, iterable)], state, frame, None))
        if not via:
            return element
        if element.elems is not None and element.element:
            # The parts of a summary item come from the container too.
            element = replace(element, elems=tuple(replace(e, via=via) if e.nodes else e for e in element.elems))
        return replace(element, via=via)

    def reads_of(self, operands: Args, state: State, frame: Frame, consumer: str | None) -> list[Read]:
        """The reads of named holders among the operands of an operation."""
        reads: list[Read] = []
        for expr, value in operands:
            if not value.nodes:
                continue
            # (A local name of an attribute's tensor, `buf = self.buf`: the attribute holds it.)
            holder = self.tensor_holder(expr, state, frame) if expr is not None else None
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
                              frame.function, _shape(value), value.maybe_none, outer,  # type: ignore[arg-type]
                              value.label, value.items, _CONTAINER_NAMES.get(value.kind)))
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
                        _shape(value), value.maybe_none, self._outer_of(holder, value, frame), value.label,
                        value.items, _CONTAINER_NAMES.get(value.kind))
            found[name] = (read, value)
        return found

    def _outer_of(self, holder: Holder, value: Value, frame: Frame) -> Read | None:
        if holder.kind == "variable" and holder.key[0] in frame.param_reads:
            passed_read, passed_value = frame.param_reads[holder.key[0]]
            if value is passed_value:
                return passed_read  # type: ignore[return-value]
        if value.kind is Kind.DATA and value.via:
            return value.via[0]  # a loader passed on: what it was built from carries the graph
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
            if name is not None:
                fact = lookup(name)
                if fact is not None and fact.saves is False:
                    return False
            return name not in K.NON_SAVING_FUNCTIONS
        return True

    def origins_made(self, ran: dict[int, int], state: State) -> dict[int, list[tuple[int, Origin]]]:
        """How the nodes a finished call made came to be, by site and generation (those of sites no
        other path has evaluated more often: the origins are shared by every path)."""
        made: dict[int, list[tuple[int, Origin]]] = {}
        for site, more in ran.items():
            if self.origin_epochs.get(site, 1) != state.epochs.get(site, 0):
                continue
            made[site] = [(generation, origin) for generation in range(min(more, GENERATIONS - 1))
                          if (origin := self.origins.get(node_id(site, generation))) is not None]
        return made

    def replayed_evaluations(self, summary: Summary, before: dict[int, int],
                             delta: Callable[[int], int]) -> None:
        """A summarised call is taken again: its sites ran again as they did in its run (what
        `refresh` replays on values read before it; how the nodes it made came to be, with the
        evaluation counts they name shifted to this state's)."""
        for site, more in summary.ran.items():
            first = before.get(site, 0)
            self.renamed.extend((site, first + k) for k in range(more) if first + k)
            end = first + more
            self._age_origin(site, end)
            if self.origin_epochs.get(site, 1) != end:
                continue
            for generation, origin in summary.origins.get(site, ()):
                self.origins[node_id(site, generation)] = replace(
                    origin, stamps={s: count + delta(s) for s, count in origin.stamps.items()})

    def _age_origin(self, site: int, epoch: int) -> None:
        """The site is evaluated for the `epoch`-th time: the origins of its earlier evaluations
        move one generation older. Origins are shared by every path: a sibling path (the other arm
        of an `if` both of whose arms run the site) that already reached this evaluation count
        moved them already."""
        known = self.origin_epochs.get(site, 1)
        if epoch <= known:
            return
        self.origin_epochs[site] = epoch
        for _ in range(min(epoch - known, GENERATIONS - 1)):
            self._age_origin_once(site)

    def _age_origin_once(self, site: int) -> None:
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
                                            {**previous.stamps, **origin.stamps},
                                            previous.owners | origin.owners)

    @staticmethod
    def statement(frame: Frame) -> cst.CSTNode | None:
        return frame.statements[-1][1] if frame.statements else None

    def container_of(self, kind: Kind, values: list[Value], exact: bool = True) -> Value:
        """A tuple, list or dict holding `values`."""
        nodes = frozenset().union(*(v.nodes for v in values)) if values else frozenset()
        top = frozenset().union(*(v.top for v in values)) if values else frozenset()
        grad = any(v.grad for v in values)
        elems = tuple(values) if exact and kind is Kind.TUPLE else None
        shape: tuple[bool, ...] | None = None
        items: str | None = None
        ref: Value | None = None
        if kind in (Kind.LIST, Kind.DICT) and exact:
            items = ""
            for value in values:
                items = add_item(items, value)
        if kind is Kind.LIST and exact:
            shape = ()
            for value in values:
                shape = add_item_shape(Value(Kind.LIST, item_shape=shape), value)
            # `[Hook(layer)]`, `[opt_g, opt_d]`: objects of one kind, as a list built by appending them.
            if values and values[0].kind in (Kind.OPTIMIZER, Kind.INSTANCE, Kind.MODULE) \
                    and all(v.kind is values[0].kind for v in values):
                for value in values:
                    ref = value if ref is None else join(ref, value)
        return Value(kind, nodes, top, grad, elems, item_shape=shape, ref=ref, items=items)

    def container_add(self, container: Value, item: Value) -> Value:
        """A container after a value was added to it (`append`, `+=`, `d[k] = v`)."""
        kind = container.kind if container.kind in (Kind.LIST, Kind.DICT, Kind.TUPLE) else Kind.LIST
        shape = add_item_shape(container, item) if kind is Kind.LIST else None
        # A list of optimizers (or modules) built by appending one per network: its items are known.
        first = kind is Kind.LIST and container.ref is None and container.item_shape == ()
        same = isinstance(container.ref, Value) and container.ref.kind is item.kind
        ref = item if item.kind in (Kind.OPTIMIZER, Kind.INSTANCE, Kind.MODULE) and (first or same) else None
        if kind is Kind.DICT and known_objects(item) and (container.items == "" or (
                isinstance(container.ref, Value) and known_objects(container.ref) == known_objects(item))):
            # `cache[net] = [m for m in net.modules() if ...]`: a mapping to the same objects.
            ref = item
        items = add_item(container.items, item) if kind in (Kind.LIST, Kind.DICT) else None
        # Objects appended one by one to a list of known objects (`modules.append(weak())` in a loop
        # over known modules): still known, in order. A loop's passes that append a different
        # number of them join into a list whose items are not.
        elems = (*container.elems, item) if kind is Kind.LIST and container.elems is not None \
            and an_object(item) and len(container.elems) < 4 * MAX_UNROLLED else None
        return Value(kind, container.nodes | item.nodes, container.top | item.top,
                     container.grad or item.grad, elems, item_shape=shape, ref=ref, items=items)

_CONTAINERS = frozenset({Kind.LIST, Kind.TUPLE, Kind.DICT})
_OBJECTS = frozenset({Kind.INSTANCE, Kind.MODULE, Kind.OPTIMIZER})
# Library classes whose name, passed around uncalled, stands for the class (`optimizer_class=optim.Adam`).
_REFERENCED = frozenset({Returns.OPTIMIZER, Returns.MODULE, Returns.DISTRIBUTION})



def _names_bound(target: cst.BaseExpression) -> frozenset[str]:
    """The names a `for` target binds (`name`, `i, (name, layer)`)."""
    if isinstance(target, cst.Name):
        return frozenset({target.value})
    if isinstance(target, (cst.Tuple, cst.List)):
        return frozenset().union(*(_names_bound(e.value) for e in target.elements))
    if isinstance(target, cst.StarredElement):
        return _names_bound(target.value)
    return frozenset()


def _literal_items(expr: cst.BaseExpression) -> bool:
    """A list, tuple or set display of literals (`["a", "b"]`): the same items wherever it runs."""
    return isinstance(expr, (cst.List, cst.Tuple, cst.Set)) and all(
        isinstance(e, cst.Element) and isinstance(e.value, (cst.SimpleString, cst.Integer, cst.Float))
        for e in expr.elements)


def _pure_iteration(expr: cst.BaseExpression) -> bool:
    """An iterable made of names, attributes, literals and calls that only read their arguments
    (`enumerate(names)`, `range(n)`, `cfg.layers.items()`): the same items while what it reads is."""
    if isinstance(expr, (cst.Name, cst.SimpleString, cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.Attribute):
        return _pure_iteration(expr.value)
    if isinstance(expr, (cst.List, cst.Tuple)):
        return all(isinstance(e, cst.Element) and _pure_iteration(e.value) for e in expr.elements)
    if isinstance(expr, cst.Subscript):
        return _pure_iteration(expr.value) and all(
            isinstance(e.slice, cst.Index) and _pure_iteration(e.slice.value) for e in expr.slice)
    if isinstance(expr, cst.BinaryOperation):
        return _pure_iteration(expr.left) and _pure_iteration(expr.right)
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Name):
            pure = func.value in K.PURE_CALLS
        elif isinstance(func, cst.Attribute):
            pure = func.attr.value in K.PURE_METHODS and _pure_iteration(func.value)
        else:
            pure = False
        return pure and all(a.keyword is None and not a.star and _pure_iteration(a.value) for a in expr.args)
    return False


def _made_by(value: Value, state: State) -> tuple[int, int] | None:
    """The evaluation (site, count) that made a tensor: its one top node, for a tensor the model
    saw made (not an item of an output whose parts the model does not tell apart)."""
    if value.kind is not Kind.TENSOR or len(value.top) != 1:
        return None
    (node,) = value.top
    return _made_by_node(node, state)


def _made_by_node(node: int, state: State) -> tuple[int, int] | None:
    """The evaluation (site, count) that made a node, counted in `state`."""
    site = node // GENERATIONS
    generation = node % GENERATIONS
    if generation == GENERATIONS - 1:
        return None  # the summary generation stands for many evaluations
    return site, state.epochs.get(site, 0) - generation


def _string_key(expr: cst.BaseExpression) -> str | None:
    """The value of a plain string literal used as a dict key, None for anything else."""
    if isinstance(expr, cst.SimpleString) and expr.prefix.lower() in ("", "u"):
        return expr.raw_value
    return None
_NO_BINDINGS = Bindings({}, {})


_CONTAINER_NAMES = {Kind.LIST: "list", Kind.DICT: "dict"}


def _shape(value: Value) -> str:
    if value.kind is Kind.TUPLE and value.elems is not None:
        return "tuple"
    if value.kind in (Kind.LIST, Kind.DICT) or (value.kind is Kind.TUPLE and isinstance(value.ref, Value)):
        return "container"  # a column of `zip(*items)` holds what the items held
    if value.kind is Kind.DATA:
        return "data"  # a batch of a dataset whose stored tensors carry a graph
    if value.kind is Kind.UNKNOWN:
        return "unknown"  # what an unseen module returned: a tensor, or a tuple of them
    return "tensor"




def role_value(role: Role | None, label: str | None) -> Value:
    """The abstract value of an object known only by how the code uses it."""
    if role is Role.MODULE:
        return Value(Kind.MODULE, label=label)
    if role is Role.CALLABLE:
        return Value(Kind.MODULE, label=label, qual=UNSURE_MODULE)
    if role is Role.OPTIMIZER:
        # Which module's parameters it updates is not known: "?" marks an owner to be inferred.
        return Value(Kind.OPTIMIZER, ref=f"?{label}", label=label)
    if role is Role.DATA:
        return DATA
    return UNKNOWN


def _self_assignments(node: cst.CSTNode) -> set[str]:
    """`X` for each `self.X = ...` (or augmented / annotated) in a class's methods."""
    found: set[str] = set()

    def target(expr: cst.BaseExpression) -> None:
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            found.add(expr.attr.value)
        elif isinstance(expr, (cst.Tuple, cst.List)):
            for element in expr.elements:
                target(element.value)

    class Finder(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            target(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            target(node.target)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            target(node.target)

    walk(node, Finder())
    return found


@lru_cache(maxsize=1024)
def _self_constructions(node: cst.CSTNode) -> dict[str, list[cst.BaseExpression]]:
    """For each `self.X = Callee(...)` in a class's methods, X and the callee called (cached by
    node: one walk of a class however many of its attributes are asked about; not to be modified)."""
    found: dict[str, list[cst.BaseExpression]] = {}

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            if len(node.targets) != 1 or not isinstance(node.value, cst.Call):
                return
            target = node.targets[0].target
            if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                    and target.value.value == "self":
                found.setdefault(target.attr.value, []).append(node.value.func)

    walk(node, Finder())
    return found


# Heap entries `(FLAG + class key, attribute)`: an attribute set to a literal True or False (or to a
# name the path knows to be one), as a scalar labelled with it.
FLAG = "<flag>:"
# The frame entries of values computed and not yet used (`Evaluator.hold`): never a name of the code.
PENDING = "<pending>"
TRUE_FLAG = Value(Kind.SCALAR, label="True")
FALSE_FLAG = Value(Kind.SCALAR, label="False")
NOT_A_FLAG = Value(Kind.SCALAR)


def _flag_of(source: cst.CSTNode | None, state: State, evaluator: Evaluator) -> bool | None:
    """True or False when `source` is that literal, or a name whose truth the path assumes."""
    if isinstance(source, cst.Name):
        if source.value in ("True", "False"):
            return source.value == "True"
        evaluator.consult(source.value)
        atom = state.assume.get(source.value)
        if atom is not None:
            return atom.truth
    return None


def _kept_on_an_object(value: Value) -> bool:
    """What an attribute of an unseen object is followed for: a container, or a graph."""
    return value.kind in (Kind.LIST, Kind.DICT, Kind.TUPLE) or bool(value.nodes)
