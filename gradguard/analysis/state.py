"""Program states (what every name and attribute holds, which graph nodes are freed) and frames."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import libcst as cst

from gradguard.analysis.conditions import Atom
from gradguard.analysis.values import (
    GENERATIONS,
    SHARED,
    Freed,
    Holder,
    Kind,
    Value,
    fold_generations,
    join,
    rename_by,
    same,
    site_nodes,
)

if TYPE_CHECKING:
    from gradguard.analysis.project import ModuleInfo

Defs = frozenset[cst.CSTNode]
HeapKey = tuple[str, str]
# A key of the evaluation counts a path's retained graph is recorded with (`State.retained`), no site's:
# an optimizer stepped on that path since the backward kept it.
STEPPED_SINCE = -1
# The heap key owner of attributes of objects whose class the analysis does not see.
OPAQUE = "<opaque>"


def heap_owner(instance: Value) -> str:
    """The heap key owner of an instance's attributes: its class, and where it was made when that is
    known (`self.policy` and `self.policy_old` of one class are two objects)."""
    key = instance.ref.key
    return key if instance.alloc is None else f"{key}@{instance.alloc}"


def class_of_owner(owner: str) -> str:
    """The class name in a heap key owner (`models:Net@PPO.policy` -> `Net`)."""
    return owner.split("@", 1)[0].rsplit(":", 1)[-1].rsplit(".", 1)[-1]


def invalidated(atom: Atom, name: str | None, text: str | None, heap: tuple[str, str] | None) -> bool:
    """Whether assigning a variable, an attribute chain or an instance attribute changes what a
    condition reads."""
    if heap is not None and heap in atom.heap:
        return True
    for dep in atom.deps:
        head = dep.split(".", 1)[0]
        if (name is not None and head == name) or (text is not None and (
                dep == text or dep.startswith(text + ".") or text.startswith(dep + "."))):
            return True
    return False


class State:
    """One abstract program state. Copied at branches, joined where paths meet."""

    __slots__ = ("assume", "dead", "defs", "epochs", "frames", "freed", "frozen", "hdefs", "heap", "no_grad",
                 "retained", "unfilled")

    def __init__(self) -> None:
        self.frames: list[dict[str, Value]] = [{}]
        self.defs: list[dict[str, Defs]] = [{}]
        self.heap: dict[HeapKey, Value] = {}
        self.hdefs: dict[HeapKey, Defs] = {}
        self.freed: dict[int, Freed] = {}
        self.no_grad = False
        # Modules (labels, and ("class", key) for every instance of a class) whose parameters are
        # frozen on the way to this state; read only for those the program also unfreezes.
        self.frozen: frozenset[object] = frozenset()
        self.dead = False
        # How many times each site has been evaluated on the way to this state.
        self.epochs: dict[int, int] = {}
        # The branch conditions this state is known to satisfy (see `conditions.py`).
        self.assume: dict[str, Atom] = {}
        # The retaining backward calls run on the way to this state, with the graph each kept (its
        # nodes, and the evaluation count of their sites then): only a later backward of the same
        # path can be one that needs it.
        self.retained: dict[Any, tuple[frozenset[int], dict[int, int]]] = {}
        # The optimizers (by the text that names them) whose gradients were reset with no backward
        # since: their step updates nothing (`zero_grad()` sets the gradients to None).
        self.unfilled: frozenset[str] = frozenset()

    def copy(self) -> State:
        """An independent copy (values themselves are immutable and shared)."""
        other = State.__new__(State)
        other.frames = [dict(f) for f in self.frames]
        other.defs = [dict(d) for d in self.defs]
        other.heap = dict(self.heap)
        other.hdefs = dict(self.hdefs)
        other.freed = dict(self.freed)
        other.no_grad = self.no_grad
        other.frozen = self.frozen
        other.dead = self.dead
        other.epochs = dict(self.epochs)
        other.assume = dict(self.assume)
        other.retained = dict(self.retained) if self.retained else {}
        other.unfilled = self.unfilled
        return other

    @staticmethod
    def dead_state(like: State) -> State:
        """An unreachable state shaped like `like` (the state after `return` or `break`)."""
        other = like.copy()
        other.dead = True
        return other

    @staticmethod
    def join_all(states: list[State]) -> State | None:
        """The state where all `states` meet; None when every one of them is unreachable.

        A node counts as freed where the paths meet only as far as the paths that still hold it
        agree: freed on all of them (strong), on some (weak: freed on one path, alive on another),
        or held by none (forgotten).
        """
        live = [s for s in states if not s.dead]
        if not live:
            return None
        live, lagged = _aligned(live)
        result = live[0].copy()
        for other in live[1:]:
            result._absorb(other)
        if len(live) > 1 and result.freed:
            held = [state.held_nodes() for state in live]
            joined = result.freed
            # Most entries are the very same record on every path (copied from a common ancestor):
            # such a node changes only when no path holds it any more.
            differing: set[int] = set()
            for state in live:
                theirs = state.freed
                differing.update([node for node, why in joined.items() if theirs.get(node) is not why])
            held_any: set[int] = set().union(*held)
            for node in [node for node in joined if node not in differing and node not in held_any]:
                del joined[node]
            for node in differing:
                why = joined[node]
                holding = [state for state, nodes in zip(live, held) if node in nodes]
                if not holding:
                    del result.freed[node]
                    continue
                # Weak unless every path holding it certainly freed it: a path where it is only
                # maybe freed (a join further up) may well be one where it never was.
                alive = [(state, index) for index, state in enumerate(live) if state in holding
                         and (node not in state.freed or state.freed[node].weak)]
                weak = bool(alive)
                # Weak only because a path whose site ran fewer times holds an older generation
                # (the iteration before the one it stands for): no path shown to skip the freeing.
                aged = why.aged or (weak and all(
                    node // GENERATIONS in lagged[index] and (node not in state.freed or state.freed[node].aged)
                    for state, index in alive))
                if weak != why.weak or aged != why.aged:
                    result.freed[node] = replace(why, weak=weak, aged=aged and weak)
        return result

    def note_grads_read(self) -> None:
        """Gradients are read: every graph freed so far was freed by a backward whose result the
        program then used."""
        for node, why in list(self.freed.items()):
            if not why.grads_read:
                self.freed[node] = replace(why, grads_read=True)

    def held_nodes(self) -> set[int]:
        """Every node some variable or attribute of this state holds a value behind."""
        nodes: set[int] = set()
        for frame in self.frames:
            for value in frame.values():
                nodes.update(value.nodes)
        for value in self.heap.values():
            nodes.update(value.nodes)
        return nodes

    def _absorb(self, other: State) -> None:
        for mine, theirs in zip(self.frames, other.frames):
            _join_dict(mine, theirs)
        for mine_d, theirs_d in zip(self.defs, other.defs):
            _union_dict(mine_d, theirs_d)
        _join_dict(self.heap, other.heap)
        _union_dict(self.hdefs, other.hdefs)
        for node, why in other.freed.items():
            mine_f = self.freed.get(node)
            if mine_f is None:
                self.freed[node] = why
            elif not why.stepped <= mine_f.stepped or (mine_f.weak and not why.weak) \
                    or (why.grads_read and not mine_f.grads_read):
                self.freed[node] = replace(mine_f, stepped=mine_f.stepped | why.stepped, weak=mine_f.weak and why.weak,
                                           grads_read=mine_f.grads_read or why.grads_read)
        for call, kept in other.retained.items():
            mine_r = self.retained.setdefault(call, kept)
            if mine_r is not kept and STEPPED_SINCE in kept[1] and STEPPED_SINCE not in mine_r[1]:
                # An optimizer stepped since the graph was kept on one of the paths: on the joined one too.
                self.retained[call] = (mine_r[0], {**mine_r[1], STEPPED_SINCE: 0})
        self.no_grad = self.no_grad and other.no_grad
        # Frozen where paths meet only if frozen on every one (as no_grad): a module its loop
        # unfreezes again at the top is trainable there.
        self.frozen = self.frozen & other.frozen
        self.unfilled = self.unfilled & other.unfilled
        if self.assume:
            self.assume = {key: atom for key, atom in self.assume.items()
                           if (theirs := other.assume.get(key)) is not None and theirs.truth == atom.truth}

    def attribute_of(self, instance: Value, name: str) -> Value | None:
        """What an object's attribute holds; for an object that may be one of several of its class
        (`m` over `model.named_children()`), what any of them holds there."""
        value = self.heap.get((heap_owner(instance), name))
        if value is not None or instance.alloc is not None:
            return value
        prefix = f"{instance.ref.key}@"
        for (owner, attribute), held in self.heap.items():
            if attribute == name and owner.startswith(prefix):
                value = join(value, held)
        return value

    def opaque_key(self, text: str) -> HeapKey:
        """The heap key of `text`, an attribute chain of an object whose class is not seen: chains
        from an instance of a seen class (`self.memory.states`) are that class's, so two classes
        with a `self.memory` of their own do not share it."""
        head, _, rest = text.partition(".")
        owner = self.frames[-1].get(head) or self.frames[0].get(head)
        if rest and owner is not None and owner.kind is Kind.INSTANCE and isinstance(owner.ref, ClassInfo):
            return (OPAQUE, f"{owner.ref.key}.{rest}")
        return (OPAQUE, text)

    def partition_key(self) -> frozenset[tuple[str, bool]]:
        """What separates this state from others at the same point: its assumed conditions."""
        return frozenset((key, atom.truth) for key, atom in self.assume.items())

    def assign_invalidates(self, name: str | None = None, text: str | None = None,
                           heap: tuple[str, str] | None = None) -> list[Atom]:
        """A variable, attribute chain or instance attribute was assigned: forget the conditions
        that read it (and say which)."""
        if not self.assume:
            return []
        dropped = [key for key, atom in self.assume.items() if invalidated(atom, name, text, heap)]
        return [self.assume.pop(key) for key in dropped]

    def same_as(self, other: State) -> bool:
        """True when joining `other` into this state would change nothing."""
        if len(self.frames) != len(other.frames):
            return False
        for mine, theirs in zip(self.frames, other.frames):
            if not _same_dict(mine, theirs):
                return False
        if not _same_dict(self.heap, other.heap) or not self.unfilled <= other.unfilled:
            return False
        if self.freed.keys() != other.freed.keys():
            return False
        return all(self.freed[k].stepped == other.freed[k].stepped for k in self.freed)

    def interchangeable(self, other: State) -> bool:
        """Whether joining `other` into this state loses nothing the analysis decides by: the two
        differ only in what names and attributes hold no graph, no object and no flag (a path
        string, a counter, a setting read from the command line), and in whether such names are
        bound. The conditions that tell them apart then separate nothing worth two runs of the code
        after them: a later test of them runs both arms from either state alike."""
        if len(self.frames) != len(other.frames) or self.no_grad != other.no_grad \
                or self.frozen != other.frozen or self.unfilled != other.unfilled \
                or self.retained.keys() != other.retained.keys() or self.freed != other.freed:
            return False
        for mine, theirs in zip(self.frames, other.frames):
            if not _close_dict(mine, theirs):
                return False
        if not _close_dict(self.heap, other.heap):
            return False
        if self.epochs != other.epochs:
            # Sites run more often on one path only: nothing either holds may come from them.
            sites = {site for site in self.epochs.keys() | other.epochs.keys()
                     if self.epochs.get(site) != other.epochs.get(site)}
            held = self.held_nodes() | other.held_nodes() | set(self.freed)
            if any(node // GENERATIONS in sites for node in held):
                return False
        return True

    def reachable(self, node: int) -> bool:
        """Whether any variable or attribute still holds a value behind `node`."""
        for frame in self.frames:
            for value in frame.values():
                if node in value.nodes:
                    return True
        return any(node in value.nodes for value in self.heap.values())

    def rename_site(self, site: int) -> None:
        """A site is evaluated again: each of its nodes gets one generation older everywhere."""
        self.rename_sites({site: 1})

    def rename_sites(self, shifts: dict[int, int]) -> None:
        """Each site is evaluated again `shifts[site]` times: its nodes get that many generations
        older everywhere (one pass over the state for every site: joins align many sites at once)."""
        if not shifts:
            return
        of_sites: frozenset[int] = site_nodes(next(iter(shifts))) if len(shifts) == 1 else frozenset().union(
            *(site_nodes(site) for site in shifts))
        # One pass finds the few values holding a node of the sites (states hold hundreds of values).
        held: set[int] = set()
        in_frames: list[tuple[dict[str, Value], str, Value]] = []
        for frame in self.frames:
            for name, value in frame.items():
                if value.nodes and not value.nodes.isdisjoint(of_sites):
                    in_frames.append((frame, name, value))
                    held.update(value.nodes & of_sites)
        in_heap: list[tuple[Any, Value]] = []
        for key, value in self.heap.items():
            if value.nodes and not value.nodes.isdisjoint(of_sites):
                in_heap.append((key, value))
                held.update(value.nodes & of_sites)
        for site, count in shifts.items():
            mine = {node for node in held if node // GENERATIONS == site}
            for _ in range(count):
                self._age_freed(site, mine)
                mine = {node if node % GENERATIONS == GENERATIONS - 1 else node + 1 for node in mine}
        for frame, name, value in in_frames:
            renamed = rename_by(value, shifts)
            if renamed is not value:
                frame[name] = renamed
        for key, value in in_heap:
            renamed = rename_by(value, shifts)
            if renamed is not value:
                self.heap[key] = renamed

    def _age_freed(self, site: int, held: set[int]) -> None:
        """What is freed of a site's nodes after one more evaluation of it (`held`: its nodes that
        values hold before it)."""
        base = site * GENERATIONS
        last = base + GENERATIONS - 1
        # Freed instances nothing holds any more cannot be reached again: forget them, so they
        # do not make a merged generation look freed.
        for node in range(base, last + 1):
            if node in self.freed and node not in held:
                del self.freed[node]
        moving = {node: self.freed.pop(node, None) for node in range(base, last)}
        summary = self.freed.get(last)
        arriving = moving[last - 1]
        if arriving is None:
            # The summary generation now also stands for an instance that was never freed.
            if summary is not None and not summary.weak:
                self.freed[last] = replace(summary, weak=True, aged=True)
        elif summary is None:
            self.freed[last] = arriving
        else:
            # The summary now stands for both instances: maybe not freed if either maybe was not.
            weak = summary.weak or arriving.weak
            aged = weak and all(why.aged for why in (summary, arriving) if why.weak)
            self.freed[last] = replace(summary, stepped=summary.stepped | arriving.stepped, weak=weak, aged=aged,
                                       grads_read=summary.grads_read or arriving.grads_read)
        for node in range(base, last - 1):
            why = moving[node]
            if why is not None:
                self.freed[node + 1] = why

    def widen(self, sites: frozenset[int]) -> None:
        """Fold the older generations of `sites` into their summary generation (a loop's
        widening: once every earlier iteration is one summary, another pass changes nothing)."""
        if not sites:
            return
        for frame in self.frames:
            for name, value in frame.items():
                frame[name] = fold_generations(value, sites)
        for key, value in self.heap.items():
            self.heap[key] = fold_generations(value, sites)
        held = self.held_nodes()
        for node in sorted(self.freed):
            site, generation = divmod(node, GENERATIONS)
            if site not in sites or not 0 < generation < GENERATIONS - 1:
                continue
            why = self.freed.pop(node)
            last = site * GENERATIONS + GENERATIONS - 1
            known = self.freed.get(last)
            if known is None:
                # The summary also stands for instances that were never freed, if any is held.
                self.freed[last] = replace(why, weak=True, aged=True) if last in held and not why.weak else why
            else:
                self.freed[last] = replace(known, stepped=known.stepped | why.stepped,
                                           weak=known.weak or why.weak, aged=known.aged or why.aged,
                                           grads_read=known.grads_read or why.grads_read)

    def replace_everywhere(self, old_value: Value, new_value: Value) -> None:
        """Every holder of `old_value` (the same tensor) now holds `new_value` (in-place ops)."""
        if old_value in SHARED:
            # The shared "nothing known" values are no particular tensor.
            return
        for frame in self.frames:
            for name, value in frame.items():
                updated = _replace_in(value, old_value, new_value)
                if updated is not value:
                    frame[name] = updated
        for key, value in self.heap.items():
            updated = _replace_in(value, old_value, new_value)
            if updated is not value:
                self.heap[key] = updated


def _aligned(states: list[State]) -> tuple[list[State], list[frozenset[int]]]:
    """Make node ids mean the same instance in every state before joining them; with, for each
    state, the sites whose nodes it moved.

    A site evaluated on one path but not on another has a "current" node that stands for different
    evaluations on the two paths; where it lags, the lagging state's current node is moved to the
    old generation, as if the site had run there too.
    """
    if all(state.epochs == states[0].epochs for state in states[1:]):
        return states, [frozenset()] * len(states)
    latest: dict[int, int] = {}
    for state in states:
        for site, epoch in state.epochs.items():
            if epoch > latest.get(site, 0):
                latest[site] = epoch
    result = []
    moved: list[frozenset[int]] = []
    for state in states:
        lagging = [site for site, epoch in latest.items() if state.epochs.get(site, 0) < epoch]
        moved.append(frozenset(lagging))
        if lagging:
            state = state.copy()
            # As many generations older as the site ran more often on the other path.
            state.rename_sites({site: min(latest[site] - state.epochs[site], GENERATIONS - 1)
                                for site in lagging if state.epochs.get(site, 0) > 0})
            for site in lagging:
                state.epochs[site] = latest[site]
        result.append(state)
    return result, moved


def _replace_in(holder: Value, old_value: Value, new_value: Value) -> Value:
    if holder is old_value:
        return new_value
    if holder.elems is not None and any(e is old_value for e in holder.elems):
        elems = tuple(new_value if e is old_value else e for e in holder.elems)
        nodes: frozenset[int] = frozenset().union(*(e.nodes for e in elems))
        top: frozenset[int] = frozenset().union(*(e.top for e in elems))
        return Value(holder.kind, nodes, top, any(e.grad for e in elems), elems, holder.ref,
                     holder.qual, holder.label, holder.maybe_none)
    return holder


def _join_dict(mine: dict, theirs: dict) -> None:
    for key, value in theirs.items():
        current = mine.get(key)
        if current is None:
            mine[key] = value
        elif current is not value:
            mine[key] = join(current, value)


def _union_dict(mine: dict, theirs: dict) -> None:
    for key, value in theirs.items():
        current = mine.get(key)
        if current is None:
            mine[key] = value
        elif current is not value:  # paths copied from one state share most of their sets
            mine[key] = current | value


def _close_dict(mine: dict[Any, Value], theirs: dict[Any, Value]) -> bool:
    """The same entries, except where each side holds a plain value (`inert`) or nothing."""
    for key in mine.keys() | theirs.keys():
        a, b = mine.get(key), theirs.get(key)
        if a is b:
            continue
        if (a is None or inert(a)) and (b is None or inert(b)):
            continue
        if a is None or b is None or not same(a, b) or a.label != b.label or a.ref is not b.ref \
                or a.qual != b.qual or a.bound is not b.bound or a.captured != b.captured:
            return False
    return True


def inert(value: Value) -> bool:
    """A plain Python value, or one the model knows nothing of: no graph, no object, no flag, no
    container of anything else (a set of parameter names a loop fills, `none_grads.add(n)`)."""
    if value.nodes or value.grad or value.ref is not None or value.qual is not None or value.label is not None \
            or value.bound is not None or value.captured or value.weights:
        return False
    if value.kind in (Kind.SCALAR, Kind.NONE, Kind.UNKNOWN):
        return value.elems is None
    return value.kind in (Kind.LIST, Kind.TUPLE, Kind.DICT) and value.alloc is None and value.parameters_of is None \
        and not value.indexed and not value.writes and value.items in (None, "") \
        and (value.elems is None or all(inert(e) for e in value.elems))


def _same_dict(mine: dict[object, Value], theirs: dict[object, Value]) -> bool:
    if mine.keys() != theirs.keys():
        return False
    return all(same(value, theirs[key]) for key, value in mine.items())


@dataclass
class FunctionInfo:
    """A function or method defined in the analysed file."""

    node: cst.FunctionDef | cst.Lambda
    qualname: str
    owner: ClassInfo | None = None
    nested: bool = False
    # For a nested function: the function whose body defines it (its closure's variables live there).
    parent: FunctionInfo | None = None
    no_grad: bool = False  # decorated with @torch.no_grad()
    module: ModuleInfo | None = None  # the project module it is defined in; None: the linted file
    # What its decorators' facts say: its results are memoised across calls (`lru_cache`); it runs
    # when its attribute is read (`property`), and then is kept on the instance (`cached_property`).
    # The decorators that memoise, each with the one that would not ("" for none).
    memoised: tuple[tuple[cst.Decorator, str], ...] = ()
    accessor: bool = False
    kept: bool = False
    binds: str | None = None  # "class" for a class method, "static" for a static method


@dataclass
class ClassInfo:
    """A class defined in the analysed file."""

    node: cst.ClassDef
    name: str
    bases: tuple[str, ...] = ()
    methods: dict[str, FunctionInfo] = field(default_factory=dict)
    is_module: bool = False
    is_lightning: bool = False
    manual_optimization: bool = False
    is_optimizer: bool = False
    module: ModuleInfo | None = None  # the project module it is defined in; None: the linted file
    # Methods of the class whose result joins the graphs of their arguments (`BaseClass.joins`).
    joins: frozenset[str] = frozenset()

    @property
    def key(self) -> str:
        """The heap key of the class's (single, abstract) instance."""
        return self.name if self.module is None else f"{self.module.name}:{self.name}"

    @property
    def qualname(self) -> str:
        """How an importer names it (`models.Net`)."""
        return self.name if self.module is None else f"{self.module.name}.{self.name}"

    def named_by(self, bases: tuple[str, ...]) -> bool:
        """Whether one of `bases` (as a subclass names them) is this class."""
        return self.name in bases or self.qualname in bases


@dataclass
class Frame:
    """One activation of a function (or the module) during the analysis; never joined."""

    function: FunctionInfo | None
    self_value: Value | None
    loops: list[cst.CSTNode]
    depth: int
    returns: list[State] = field(default_factory=list)
    return_values: list[Value] = field(default_factory=list)
    breaks: list[list[State]] = field(default_factory=list)
    continues: list[list[State]] = field(default_factory=list)
    global_names: set[str] = field(default_factory=set)
    statements: list[tuple[cst.CSTNode, cst.CSTNode]] = field(default_factory=list)
    imports: dict[str, str] = field(default_factory=dict)
    # Parameters bound to a caller's variable: the caller's read, and the value passed.
    param_reads: dict[str, tuple[object, object]] = field(default_factory=dict)
    # The branches being run, across inlined calls: (the `if` statement, the arm taken).
    conditions: list[tuple[cst.CSTNode, bool]] = field(default_factory=list)
    # The project module whose code runs (None: the linted file): where its globals are.
    module: ModuleInfo | None = None
    # The call this activation runs for (None for an entry): the context of the sites it evaluates.
    call_site: cst.CSTNode | None = None
    # The innermost call in the linted file's own code that led here, with its statement (None while
    # that code runs): where a backward in another module's code is reported.
    local_call: tuple[cst.CSTNode, cst.CSTNode | None] | None = None
    # For a closure run after the function that defined it returned: the variables it captured.
    captured: frozenset[str] = frozenset()
    # Local names bound to the tensor an object's attribute holds (`buf = self.buf`): the attribute,
    # and the statement that bound the name so (an in-place write through the name writes the
    # attribute's tensor while that statement is among the name's definitions).
    tensor_aliases: dict[str, tuple[Holder, cst.CSTNode]] = field(default_factory=dict)
