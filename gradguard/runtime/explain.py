"""Turning a failed backward call into a `Diagnosis`: graph walk, carrier, culprit, cause.

Runs only after autograd raised, inside the monitor's error handler, under a time and node budget.
It holds graph nodes, tensors and frames only while it runs; the result is plain data.

For "backward through the graph a second time":
1. walk the failing graph, classifying nodes as stale (old and freed) against the root sequence
   numbers of earlier non-retaining calls (`inspect.walk`);
2. rank the tensors held by the user's frames (then by their modules and objects) by how they reach
   the stale part (`carrier.Scanner`, `causes.Ranked`);
3. find the earlier call that freed it: exactly when its root is still reachable (a live variable, or
   deep mode's held roots), which also lets the walk be redone against that call's own graph;
   otherwise the first non-retaining call after the stale node was created;
4. decide the cause from graph, records and source (`runtime.causes`), and the fix kind from the
   model shared with the lint rules (`gradguard.causes`, through `diagnosis.choose_fix`).
"""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from typing import Any

from gradguard.runtime import causes
from gradguard.runtime.carrier import Candidate, Scanner
from gradguard.runtime.causes import Ranked
from gradguard.runtime.context import Context, Failure
from gradguard.runtime.deep import SITE_KEY
from gradguard.runtime.diagnosis import (
    Cause,
    Diagnosis,
    ErrorKind,
    choose_fix,
    explanation_for,
    rule_for,
)
from gradguard.runtime.graph import (
    INF,
    GraphView,
    SavedProbe,
    children_of,
    contains_node,
    grad_fn_of,
    graph_nodes,
    node_name,
    node_seq,
    walk,
)
from gradguard.runtime.inplace import explain_inplace
from gradguard.runtime.records import CallRecord

__all__ = ["Failure", "explain"]

SPLIT_NODES = ("SplitBackward", "SplitWithSizesBackward", "UnbindBackward", "UnsafeSplitBackward", "ChunkBackward")


def explain(failure: Failure, kind: ErrorKind) -> Diagnosis:
    """The diagnosis of one autograd error (raises on internal failure; the monitor guards it)."""
    context = Context(failure)
    rank, world = _distributed(context.torch)
    if kind is ErrorKind.INPLACE_MODIFIED:
        return explain_inplace(context, rank, world)
    return _explain_double_backward(context, rank, world)


def _distributed(torch: Any) -> tuple[int | None, int | None]:
    if "torch.distributed" not in sys.modules:
        return None, None
    try:
        dist = torch.distributed
        if dist.is_available() and dist.is_initialized():
            return int(dist.get_rank()), int(dist.get_world_size())
    except Exception:  # noqa: BLE001, S110 - a broken process group must not hide the diagnosis
        pass
    return None, None


def _earlier_freeing(failure: Failure) -> list[CallRecord]:
    """Completed non-retaining calls of the same thread that started before the failing one."""
    failing = failure.record
    return [
        r
        for r in failure.records
        if r.index < failing.index
        and r.thread == failing.thread
        and r.frees_graph
        and r.completed
        and any(s >= 0 for s in r.root_seqs)
    ]


class _Search:
    """The graph view and the ranked candidates, redone when a better view becomes available."""

    def __init__(self, context: Context, scanner: Scanner, view: GraphView) -> None:
        self.context = context
        self.scanner = scanner
        self.view = view
        self.best = self._best()

    def _best(self) -> Ranked | None:
        ranked = _rank(self.context, self.scanner.candidates, self.view)
        if (not ranked or not ranked[0].convincing) and not self.scanner.objects_scanned:
            self.scanner.scan_objects()
            ranked = _rank(self.context, self.scanner.candidates, self.view)
        return ranked[0] if ranked else None

    def use(self, view: GraphView) -> None:
        self.view = view
        self.best = self._best()

    @property
    def target(self) -> int | None:
        """The stale node the carrier leads to (else the first stale node found from the root)."""
        if self.best is not None:
            return self.best.boundary
        boundary = self.view.boundary()
        return boundary[0] if boundary else None


def _explain_double_backward(context: Context, rank: int | None, world: int | None) -> Diagnosis:
    failure = context.failure
    torch = context.torch
    budget = failure.budget
    earlier = _earlier_freeing(failure)
    threshold = max((max(r.root_seqs) for r in earlier), default=None)
    root_nodes = [grad_fn_of(t) for t in failure.roots]
    probe = SavedProbe()
    distribution = getattr(getattr(torch, "distributions", None), "Distribution", None)
    scanner = Scanner(
        is_tensor=lambda v: isinstance(v, torch.Tensor),
        wanted=lambda t: t.grad_fn is not None,
        module_type=torch.nn.Module,
        whole_types=(distribution,) if isinstance(distribution, type) else (),
    )
    scanner.scan_frames(context.frames)
    search = _Search(context, scanner, walk(root_nodes, threshold, budget, probe))

    known = _known_roots(context, earlier, scanner.candidates)
    if known:
        stale: set[Any] = set()
        for _, root in known:
            stale |= graph_nodes(root, budget)
        refined = walk(root_nodes, threshold, budget, probe, stale=stale)
        if refined.boundary():
            search.use(refined)
    culprit, exact = _culprit(search.view, search.target, earlier, known, budget)
    view, best, target = search.view, search.best, search.target

    freed = view.freed_node(target, budget, probe) if target is not None else None
    node = node_name(freed) if freed is not None else (view.name(target) if target is not None else None)
    earlier_roots = {seq for record in earlier for seq in record.root_seqs}
    root_is_target = target is not None and target in view.roots
    root_stale = root_is_target and (view.seq[target] in earlier_roots or bool(known))
    hint = None
    if root_is_target and not root_stale:
        # The failing loss was built before an earlier backward ran and looks freed only because the
        # failing call itself freed it on the way: which shared tensor it reached is not knowable
        # without the earlier call's root.
        hint = "deep mode (`gradguard.install(deep=True)`) names the tensor the two graphs share"
    carrier = context.carrier(best.candidate) if best is not None else None
    weak = best is None or (not best.is_root and not best.convincing)
    if culprit is not None and target is not None and weak and view.seq[target] in culprit.root_seqs:
        # The stale node is the earlier call's own root (`u` in `grad(u, t)` inside a helper that has
        # returned): that call's source names it.
        carrier = context.receiver_carrier(culprit) or carrier
        best = None if carrier is not None and best is not None else best
    if best is not None and not best.convincing and target is not None:
        created = context.created_carrier(view.nodes[target], freed)
        if created is not None:
            carrier, best = created, None
    cause = causes.decide(context, best, carrier, culprit, root_stale, shared_root=hint is not None)
    failing_site = context.call_site(failure.record)
    if cause is Cause.SHARED_FORWARD and carrier is not None:
        carrier = causes.joint_carrier(context, carrier, failing_site)
    freed_site = context.call_site(culprit)
    facts = causes.fix_facts(context, best, carrier, culprit, failing_site, freed_site)
    diagnosis = Diagnosis(
        error=ErrorKind.DOUBLE_BACKWARD,
        message=failure.message,
        failing_call=failing_site,
        freed_by=freed_site,
        node=node,
        carrier=carrier,
        fix=choose_fix(cause, facts),
        rule=rule_for(cause),
        explanation="",
        cause=cause,
        freed_by_exact=exact,
        rank=rank,
        world_size=world,
        created_at=_creation_site(view, target, freed),
        called_by=_library_caller(context),
        hint=hint,
    )
    return replace(diagnosis, explanation=explanation_for(diagnosis))


def _rank(context: Context, candidates: list[Candidate], view: GraphView) -> list[Ranked]:
    """Candidates that reach the stale part, best first.

    A carried variable whose current value is not in the failing graph (the new `hidden` after
    `out, hidden = rnn(x, hidden)`) still counts when its node has the same type as a stale node: its
    previous value is what brought the stale graph in.
    """
    boundary_by_name: dict[str, int] = {}
    split_inputs: dict[Any, int] = {}
    for b in view.boundary():
        boundary_by_name.setdefault(view.name(b), b)
        if view.name(b).startswith(SPLIT_NODES):
            for child in children_of(view.nodes[b]):
                split_inputs.setdefault(child, b)
    ranked: list[Ranked] = []
    for candidate in candidates:
        node = candidate.tensor.grad_fn
        i = view.index.get(node)
        if node in split_inputs:
            ranked.append(Ranked(candidate, -1, 0, split_inputs[node], True, False, False, upstream=True))
            continue
        if i is None or view.dist[i] >= INF:
            b = boundary_by_name.get(node_name(node))
            if b is not None and context.is_carried(candidate):
                ranked.append(Ranked(candidate, -1, 0, b, True, False, True))
            continue
        boundary = view.reach[i]
        ranked.append(
            Ranked(
                candidate=candidate,
                index=i,
                dist=view.dist[i],
                boundary=boundary,
                same_op=view.name(i) == view.name(boundary),
                is_root=i in view.roots,
                carried=context.is_carried(candidate),
            )
        )
    ranked.sort(key=Ranked.key)
    return ranked


def _known_roots(
    context: Context, earlier: list[CallRecord], candidates: list[Candidate]
) -> list[tuple[CallRecord, Any]]:
    """Earlier calls whose root node is still reachable: held by deep mode, or a live variable
    whose node's sequence number is a recorded root of that call (latest call first)."""
    by_index = {r.index: r for r in earlier}
    known: dict[int, tuple[CallRecord, Any]] = {}
    for index, root in context.failure.held_roots:
        record = by_index.get(index)
        if record is not None:
            known.setdefault(index, (record, root))
    by_seq: dict[int, CallRecord] = {}
    for record in earlier:
        for seq in record.root_seqs:
            by_seq.setdefault(seq, record)
    for candidate in candidates:
        root = candidate.tensor.grad_fn
        record = by_seq.get(node_seq(root))
        if record is not None:
            known.setdefault(record.index, (record, root))
    return sorted(known.values(), key=lambda item: -item[0].index)


def _culprit(
    view: GraphView,
    target: int | None,
    earlier: list[CallRecord],
    known: list[tuple[CallRecord, Any]],
    budget: Any,
) -> tuple[CallRecord | None, bool]:
    """(record, exact) of the earlier call that freed the stale node.

    Exact when a known root's graph contains the stale node; otherwise the first non-retaining call
    that ran after the stale node was created.
    """
    if target is None or not earlier:
        return None, False
    stale = view.nodes[target]
    for record, root in sorted(known, key=lambda item: item[0].index):
        if contains_node(root, [stale], budget, limit=50_000):
            return record, True
    stale_seq = view.seq[target]
    for record in earlier:
        if max(record.root_seqs) >= stale_seq:
            return record, False
    return None, False


def _library_caller(context: Context) -> str | None:
    """`file:line in function()` of the library frame that made the failing call, if not user code."""
    caller = context.failure.caller
    if caller is None or not causes.from_library(context):
        return None
    return f"{caller.f_code.co_filename}:{caller.f_lineno} in {caller.f_code.co_qualname}()"


def _creation_site(view: GraphView, target: int | None, freed: Any) -> str | None:
    """Where the stale node was created, when deep mode or anomaly mode recorded it.

    Deep mode stamps module outputs, which may sit a few ops above the stale node (the RNN's stacked
    hidden state above its tanh): old parents of the stale node are searched too.
    """
    if target is None:
        return None
    nodes = [freed, view.nodes[target], *(view.nodes[i] for i in _old_parents(view, target, levels=3))]
    for node in nodes:
        if node is None:
            continue
        try:
            metadata = node.metadata
        except Exception:  # noqa: BLE001, S112 - foreign node types have no metadata
            continue
        site = metadata.get(SITE_KEY)
        if site:
            filename, line, owner = site
            return f"{filename}:{line}" + (f" (output of {owner})" if owner else "")
        trace = metadata.get("traceback_")
        if trace:
            found = re.findall(r'File "([^"]+)", line (\d+)', "".join(trace))
            if found:
                return f"{found[-1][0]}:{found[-1][1]} (from anomaly mode)"
    return None


def _old_parents(view: GraphView, target: int, levels: int) -> list[int]:
    """Nodes above `target` in the walked graph, nearest first, that are old (not from this step)."""
    parents: dict[int, list[int]] = {}
    for i, children in enumerate(view.children):
        for c in children:
            parents.setdefault(c, []).append(i)
    found: list[int] = []
    frontier = [target]
    threshold = view.threshold if view.threshold is not None else -1
    for _ in range(levels):
        frontier = [p for i in frontier for p in parents.get(i, []) if view.seq[p] <= threshold]
        found.extend(frontier)
    return found
