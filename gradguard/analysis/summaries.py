"""Summaries of calls that leave no trace but their result.

A function run for its result only (a validation or logging routine called from inside a training
loop, a helper computing a schedule) is called again at each pass of the loops around it, once per
path partition, with the very same inputs. Its analysis is kept as a summary: the inputs it ran
from (the arguments, the receiver, and everything of the state a call can read) and what it gave
back. A later call from the same inputs takes the result instead of running the body again.

A run is kept only when what it changed is replayed exactly: how often each site ran (a node is
named by how many evaluations of its site ago it was made, so a run from the same inputs makes the
same result, and ages the caller's nodes of its sites as the run did), attributes of objects set to
values that hold no graph node (an evaluation helper building `Boxes` of its own), and the facts
recorded by evaluation count (`Entry`: what a module call's node keeps, where a saved tensor is
held), shifted to the counts of the state the summary is taken in. No variable, freed node, assumed
condition or optimizer state may differ afterwards but by that ageing, and the run recorded nothing
for the caller's statement (a freeing backward, a flag split). A model's forward called at every
pass and path of a training loop is so analysed once per distinct input.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import libcst as cst

from gradguard.analysis.conditions import EQUALITY, FLAG_ATOM, Atom, Membership
from gradguard.analysis.state import HeapKey, State, invalidated
from gradguard.analysis.values import GENERATIONS, Origin, Value
from gradguard.parse import walk

# How many summaries are kept per call site (the most recent first out).
MAX_PER_SITE = 8

# A fact recorded by evaluation count: ("calls", site, count, owners): the node of that evaluation of
# a module call keeps the owners' parameters; ("labels", site, count, label): the module it called;
# ("made", (site, count), site2, count2): the tensor that evaluation made is kept by that one's node;
# ("by", holder key, site, count): the tensor held there is; ("viewing", (site, count), (site2, count2)):
# the tensor the first evaluation made is a view of the one the second made (they share a version).
Entry = tuple[Any, ...]


class EvaluationTables(Protocol):
    module_calls: dict[tuple[int, int], frozenset[str]]
    module_labels: dict[tuple[int, int], str]
    saved_made: dict[tuple[int, int], set[tuple[int, int]]]
    saved_by: dict[tuple[str, ...], set[tuple[int, int]]]
    view_bases: dict[tuple[int, int], tuple[int, int]]


class ReplayTarget(EvaluationTables, Protocol):
    def note_evaluation(self, entry: Entry) -> None: ...

    def replayed_evaluations(self, summary: Summary, before: dict[int, int],
                             delta: Callable[[int], int]) -> None: ...


def apply_entry(tables: EvaluationTables, entry: Entry) -> None:
    kind = entry[0]
    if kind == "calls":
        tables.module_calls[(entry[1], entry[2])] = entry[3]
    elif kind == "labels":
        tables.module_labels[(entry[1], entry[2])] = entry[3]
    elif kind == "made":
        tables.saved_made.setdefault(entry[1], set()).add((entry[2], entry[3]))
    elif kind == "viewing":
        tables.view_bases[entry[1]] = entry[2]
    else:
        tables.saved_by.setdefault(entry[1], set()).add((entry[2], entry[3]))


def shift_entry(entry: Entry, delta: Callable[[int], int]) -> Entry:
    """The entry of the same evaluations, counted in a state where each site ran `delta(site)` more
    times before the call than in the run that recorded it."""
    kind = entry[0]
    if kind in ("calls", "labels"):
        return (kind, entry[1], entry[2] + delta(entry[1]), entry[3])
    if kind == "made":
        made = entry[1]
        return (kind, (made[0], made[1] + delta(made[0])), entry[2], entry[3] + delta(entry[2]))
    if kind == "viewing":
        (site, count), (base, base_count) = entry[1], entry[2]
        return (kind, (site, count + delta(site)), (base, base_count + delta(base)))
    return (kind, entry[1], entry[2], entry[3] + delta(entry[2]))


def exactly(a: Any, b: Any) -> bool:
    """Whether two abstract values are the same in every field, nested values included (a container
    whose items a run aged is another object than the one the run it is compared with aged)."""
    if a is b:
        return True
    if type(a) is Value and type(b) is Value:
        mine, theirs = a.__dict__, b.__dict__
        return all(exactly(value, theirs[key]) for key, value in mine.items())
    if type(a) is tuple and type(b) is tuple:
        return len(a) == len(b) and all(exactly(x, y) for x, y in zip(a, b))
    return a == b


def _same_map(mine: dict, theirs: dict) -> bool:
    if len(mine) != len(theirs):
        return False
    for key, value in mine.items():
        other = theirs.get(key, _MISSING)
        if other is _MISSING or not exactly(value, other):
            return False
    return True


_MISSING = object()


@dataclass
class Recorder:
    """What a call's run read of the path conditions and of the heap, and what it assigned (its
    callees' included). Heap entries are noted by key, by owner (every attribute of one object),
    or by prefixes of owner and attribute (an object that may be any of its class; an unseen
    object's attribute chains)."""

    consulted: set[str] = field(default_factory=set)
    assigned: set[tuple[str | None, str | None, tuple[str, str] | None]] = field(default_factory=set)
    functions: set[cst.CSTNode] = field(default_factory=set)
    heap_keys: set[HeapKey] = field(default_factory=set)
    heap_owners: set[str] = field(default_factory=set)
    heap_scans: set[tuple[str, str]] = field(default_factory=set)
    # It read gradients (`p.grad`): every graph freed before is one whose gradients were used.
    reads_grads: bool = False
    # How many frames the caller's state had: variables bound in deeper ones are the call's own.
    depth: int = 0
    # The facts recorded by evaluation count, in order (`Entry`).
    journal: list[Entry] = field(default_factory=list)
    # Once its summary is kept the record no longer changes, and what it touches is asked again at
    # every look-up of the summary, for every entry of the heap: the answers are kept.
    sealed: bool = False
    _touched: dict[HeapKey, bool] = field(default_factory=dict, repr=False, compare=False)

    def absorb(self, other: Recorder) -> None:
        self.consulted |= other.consulted
        self.assigned |= other.assigned
        self.functions |= other.functions
        self.heap_keys |= other.heap_keys
        self.heap_owners |= other.heap_owners
        self.heap_scans |= other.heap_scans
        self.reads_grads |= other.reads_grads

    def touches(self, key: HeapKey) -> bool:
        """Whether the run read or wrote this heap entry (or could have: a scan that covers it)."""
        if key in self.heap_keys or key[0] in self.heap_owners:
            return True
        owner, attribute = key
        return any(owner.startswith(o) and attribute.startswith(a) for o, a in self.heap_scans)

    def reads(self, atom: Atom) -> bool:
        return self.reads_key(atom.key, atom.equality)

    def reads_key(self, key: str, equality: Membership | None) -> bool:
        return key in self.consulted or (equality is not None and EQUALITY + equality[0] in self.consulted) \
            or (key.startswith(FLAG_ATOM) and key.split("=", 1)[0] in self.consulted)

    def changes(self, atom: Atom) -> bool:
        return any(invalidated(atom, *assignment) for assignment in self.assigned)


@dataclass(frozen=True)
class View:
    """The part of a state a summarised run can have read: the path conditions it consulted; of the
    frames of the functions around a closure, the names its code (and its callees') mentions; of the
    freed nodes, those of sites it evaluated (a call that runs no backward and no step reads the
    freed nodes only to age the ones of its own sites)."""

    recorder: Recorder | None = None
    closure: bool = True
    names: frozenset[str] | None = None
    sites: frozenset[int] | None = None
    # The globals a run can read: those the code it ran names (a function reads a global only by
    # naming it); all of them when not known.
    global_names: frozenset[str] | None = None
    # Whether a value holds nodes of `sites`, by the value's identity (the value kept with the answer,
    # so an id is never taken for another value's): every look-up asks it of the same heap values.
    held: dict[int, tuple[Value, bool]] = field(default_factory=dict, compare=False, hash=False, repr=False)


FULL = View()


@dataclass
class Inputs:
    """What of a state a call can read, but how often each site ran (copied shallowly: values are
    immutable)."""

    frames: list[dict[str, Value]]
    defs: list[dict[str, Any]]
    heap: dict[Any, Value]
    hdefs: dict[Any, Any]
    freed: dict[int, Any]
    assume: dict[str, tuple[Any, ...]]
    rest: tuple[Any, ...]

    @staticmethod
    def of(state: State, view: View = FULL) -> Inputs:
        recorder = view.recorder
        frames, defs = _scoped(state.frames, state.defs, view, copy=True)
        assume = {k: (a.truth, a.deps, a.heap, a.level, a.equality) for k, a in state.assume.items()
                  if recorder is None or recorder.reads(a)}
        heap, hdefs = _heap_view(state.heap, state.hdefs, recorder, view.sites, view.held)
        return Inputs(frames, defs, heap, hdefs, _freed_at(state.freed, view.sites, copy=True), assume,
                      (state.no_grad, state.unfilled, state.frozen, dict(state.retained), len(state.frames)))

    def project(self, view: View) -> Inputs:
        """These full inputs as `view` sees them (what `of(state, view)` gives for the same state)."""
        recorder = view.recorder
        frames, defs = _scoped(self.frames, self.defs, view, copy=False)
        assume = self.assume if recorder is None else {
            k: a for k, a in self.assume.items() if recorder.reads_key(k, a[-1])}
        heap, hdefs = _heap_view(self.heap, self.hdefs, recorder, view.sites, view.held)
        return Inputs(frames, defs, heap, hdefs, _freed_at(self.freed, view.sites, copy=False), assume, self.rest)

    def aged(self, shifts: dict[int, int]) -> Inputs:
        """These inputs once each site of `shifts` ran that many more times (its nodes older
        wherever they are held, its freed nodes aged), as a run of those sites leaves them."""
        if not shifts:
            return self
        scratch = State.__new__(State)
        scratch.frames = [dict(f) for f in self.frames]
        scratch.heap = dict(self.heap)
        scratch.freed = dict(self.freed)
        scratch.rename_sites(shifts)
        return replace(self, frames=scratch.frames, heap=scratch.heap, freed=scratch.freed)

    def same(self, other: Inputs) -> bool:
        if self.rest != other.rest or self.assume != other.assume or self.freed != other.freed \
                or self.hdefs != other.hdefs:
            return False
        if len(self.frames) != len(other.frames) or self.defs != other.defs:
            return False
        return _same_map(self.heap, other.heap) and all(
            _same_map(f, g) for f, g in zip(self.frames, other.frames, strict=True))


def _scoped(frames: list[dict[str, Any]], defs: list[dict[str, Any]], view: View,
            copy: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The frames (and their definitions) a run can read: the globals; of the functions around a
    closure, the names its code mentions (all of them when not known); none for another call."""
    whole = dict if copy else (lambda d: d)
    wanted = view.global_names
    if wanted is None:
        first, first_defs = whole(frames[0]), whole(defs[0])
    else:
        first = {k: v for k, v in frames[0].items() if k in wanted}
        first_defs = {k: v for k, v in defs[0].items() if k in wanted}
    if not view.closure:
        return [first], [first_defs]
    names = view.names
    if names is None:
        return [first, *(whole(f) for f in frames[1:])], [first_defs, *(whole(d) for d in defs[1:])]
    return ([first, *({k: v for k, v in f.items() if k in names} for f in frames[1:])],
            [first_defs, *({k: v for k, v in d.items() if k in names} for d in defs[1:])])


def _freed_at(freed: dict[int, Any], sites: frozenset[int] | None, copy: bool) -> dict[int, Any]:
    """The freed nodes a run can read: those of the sites it evaluated (all when not known)."""
    if sites is None:
        return dict(freed) if copy else freed
    return {node: why for node, why in freed.items() if node // GENERATIONS in sites}


def _nodes_at(value: Value, sites: frozenset[int]) -> bool:
    if any(node // GENERATIONS in sites for node in value.nodes):
        return True
    return any(_nodes_at(e, sites) for e in value.elems or ())


def _heap_view(heap: dict[HeapKey, Value], hdefs: dict[HeapKey, Any], recorder: Recorder | None,
               sites: frozenset[int] | None, held: dict[int, tuple[Value, bool]] | None = None,
               ) -> tuple[dict[HeapKey, Value], dict[HeapKey, Any]]:
    """The heap entries a run touched, and those holding nodes of the sites it evaluated (a site
    evaluated again ages its nodes wherever they are held)."""
    if recorder is None or sites is None:
        return dict(heap), dict(hdefs)
    if held is None:
        kept = {key: value for key, value in heap.items() if recorder.touches(key) or _nodes_at(value, sites)}
    else:
        kept = {}
        touched = recorder._touched if recorder.sealed else None
        for key, value in heap.items():
            hit = touched.get(key) if touched is not None else None
            if hit is None:
                hit = recorder.touches(key)
                if touched is not None:
                    touched[key] = hit
            if hit:
                kept[key] = value
                continue
            known = held.get(id(value))
            if known is None or known[0] is not value:
                known = held[id(value)] = (value, _nodes_at(value, sites))
            if known[1]:
                kept[key] = value
    return kept, {key: defs for key, defs in hdefs.items() if key in kept or recorder.touches(key)}


@dataclass
class Summary:
    arguments: tuple[Any, ...]
    view: View
    inputs: Inputs
    recorder: Recorder
    result: Value
    ran: dict[int, int]  # site -> how many more times it ran during the call
    stored: dict[Any, tuple[Value, Any]]  # the attributes it set: (value, assigning statements)
    epochs: dict[int, int] = field(default_factory=dict)  # how often each site had run before it
    journal: list[Entry] = field(default_factory=list)
    # Per site it ran: how the nodes it made came to be, by generation (`Evaluator.origins`).
    origins: dict[int, list[tuple[int, Origin]]] = field(default_factory=dict)
    # Freed nodes nothing held that the run forgot (`State.join_all`), numbered as after the run.
    collected: frozenset[int] = frozenset()
    # Flags of objects its paths disagreed on (`Interpreter.note_splits`), noted again at each replay.
    splits: dict[str, Atom] = field(default_factory=dict)


def _argument_key(args: list[tuple[Any, Value]], kwargs: dict[str, Value], self_value: Value | None) -> tuple:
    return (tuple(v for _, v in args), tuple(sorted(kwargs.items(), key=lambda item: item[0])), self_value)


def _same_arguments(a: tuple, b: tuple) -> bool:
    positional, keywords, receiver = a
    positional2, keywords2, receiver2 = b
    if len(positional) != len(positional2) or len(keywords) != len(keywords2):
        return False
    if not all(exactly(x, y) for x, y in zip(positional, positional2)):
        return False
    if any(k != k2 or not exactly(v, v2) for (k, v), (k2, v2) in zip(keywords, keywords2)):
        return False
    return (receiver is None) == (receiver2 is None) and (receiver is None or exactly(receiver, receiver2))


def _holds_nodes(value: Value) -> bool:
    if value.nodes or value.top:
        return True
    return any(_holds_nodes(e) for e in value.elems or ())


class Summaries:
    """The summaries of one analysis, by call site and function."""

    def __init__(self) -> None:
        self.by_site: dict[tuple[int, int], list[Summary]] = {}
        self._mentioned: dict[cst.CSTNode, frozenset[str]] = {}

    def find(self, site: tuple[Any, ...], args: list[tuple[Any, Value]], kwargs: dict[str, Value],
             self_value: Value | None, state: State, closure: bool) -> Summary | None:
        kept = self.by_site.get(site)
        if not kept:
            return None
        arguments = _argument_key(args, kwargs, self_value)
        for summary in kept:
            if not _same_arguments(summary.arguments, arguments):
                continue
            recorder = summary.recorder
            if summary.inputs.same(Inputs.of(state, summary.view)) and not any(
                    recorder.changes(atom) for atom in state.assume.values() if not recorder.reads(atom)):
                return summary
        return None

    def mentioned(self, function: cst.CSTNode) -> frozenset[str]:
        """Every name a function's code mentions (what a closure may read of the functions around it)."""
        found = self._mentioned.get(function)
        if found is None:
            names: set[str] = set()

            class Names(cst.CSTVisitor):
                def visit_Name(self, node: cst.Name) -> None:
                    names.add(node.value)

            walk(function, Names())
            found = self._mentioned[function] = frozenset(names)
        return found

    @staticmethod
    def replay(summary: Summary, state: State, tables: ReplayTarget | None = None) -> Value:
        """What the summarised run did to `state` and to the analysis's tables, done again; its result."""
        epochs = summary.epochs
        now = dict(state.epochs)

        def delta(site: int) -> int:
            return now.get(site, 0) - epochs.get(site, 0)

        if tables is not None:
            for entry in summary.journal:
                tables.note_evaluation(shift_entry(entry, delta))
        if summary.ran:
            state.rename_sites(summary.ran)
        for site, more in summary.ran.items():
            state.epochs[site] = now.get(site, 0) + more
        if summary.recorder.reads_grads:
            state.note_grads_read()
        if summary.collected:
            held = state.held_nodes()
            for node in summary.collected:
                if node not in held:
                    state.freed.pop(node, None)
        for key, (value, defs) in summary.stored.items():
            state.heap[key] = value
            if defs is None:
                state.hdefs.pop(key, None)
            else:
                state.hdefs[key] = defs
        if tables is not None:
            tables.replayed_evaluations(summary, now, delta)
        return summary.result

    def begin(self, args: list[tuple[Any, Value]], kwargs: dict[str, Value], self_value: Value | None,
              state: State, closure: bool) -> tuple[tuple, Inputs, dict[int, int], bool]:
        return _argument_key(args, kwargs, self_value), Inputs.of(state), dict(state.epochs), closure

    def keep(self, site: tuple[Any, ...], started: tuple[tuple, Inputs, dict[int, int], bool],
             state: State, result: Value, recorder: Recorder) -> Summary | None:
        """Keep the run as a summary when it left nothing behind but its result (its callers'
        locals included: a call never changes them, a closure may), with the view of the state
        its inputs are compared in."""
        arguments, before, epochs, closure = started
        if state.dead:
            return None
        ran = {site: count - epochs.get(site, 0) for site, count in state.epochs.items()
               if count != epochs.get(site, 0)}
        if any(more < 0 for more in ran.values()) or len(state.epochs) < len(epochs):
            return None
        # What the caller's state would be if the run had only evaluated its sites.
        aged = before.aged(ran)
        after = Inputs.of(state)
        # Attributes it set: to another value, or to the same one by another assignment.
        stored = {key: (value, state.hdefs.get(key)) for key, value in state.heap.items()
                  if not exactly(aged.heap.get(key, _MISSING), value) or aged.hdefs.get(key) != state.hdefs.get(key)}
        if any(_holds_nodes(value) for value, _ in stored.values()) or not before.heap.keys() <= state.heap.keys():
            return None
        # A join inside the run forgets freed nodes that nothing holds any more, of any site: no
        # effect of the call, and a replay forgets them too where nothing holds them.
        collected = frozenset(aged.freed.keys() - after.freed.keys())
        if collected:
            if collected & state.held_nodes():
                return None
            after.freed.update((node, aged.freed[node]) for node in collected)
        if recorder.reads_grads:
            # A logging helper's `p.grad`: every freed record says so after the run, and after a replay.
            if after.freed != {node: why if why.grads_read else replace(why, grads_read=True)
                               for node, why in aged.freed.items()}:
                return None
            after.freed = aged.freed
        for key in stored:
            # What the summary replays is compared no further.
            for mine, theirs in ((after.heap, aged.heap), (after.hdefs, aged.hdefs)):
                if key in theirs:
                    mine[key] = theirs[key]
                else:
                    mine.pop(key, None)
        if not aged.same(after):
            return None
        kept = self.by_site.setdefault(site, [])
        mentioned = frozenset().union(*map(self.mentioned, recorder.functions))
        recorder.sealed = True
        view = View(recorder, closure, mentioned if closure else None, frozenset(ran),
                    mentioned if recorder.functions else None)
        summary = Summary(arguments, view, before.project(view), recorder, result, ran, stored, epochs,
                          recorder.journal, collected=collected)
        kept.insert(0, summary)
        del kept[MAX_PER_SITE:]
        return summary
