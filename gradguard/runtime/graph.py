"""The graph walk at error time: which part of the failing call's graph is stale, and where it starts.

A node is *old* when it was created no later than the root of the last graph an earlier call freed
(sequence numbers are a per-thread creation counter). The failing call frees the fresh nodes it ran
before it failed, so "freed" alone says nothing; "old and freed" does. Nodes without saved tensors
(`AddBackward0`, views) cannot be probed: they are stale when they are old and lead to stale nodes.
The walk never expands below a stale node, so its cost follows the fresh part of the graph.

Everything here runs only once autograd has raised, and holds graph nodes only while it runs.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

ACCUMULATE_SEQ = 2**64 - 1
INF = 1 << 30

NEUTRAL, LIVE, STALE = 0, 1, 2


class BudgetExceeded(Exception):
    """The analysis ran out of its time or node budget."""


@dataclass
class Budget:
    """A deadline and a node cap shared by every walk of one analysis."""

    seconds: float = 2.0
    max_nodes: int = 200_000
    deadline: float = field(init=False)
    nodes: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.deadline = time.perf_counter() + self.seconds

    def spend(self, nodes: int = 1) -> None:
        """Count visited nodes; raise BudgetExceeded past the cap or the deadline."""
        self.nodes += nodes
        if self.nodes > self.max_nodes or (self.nodes & 1023 == 0 and time.perf_counter() > self.deadline):
            raise BudgetExceeded(f"stopped after {self.nodes} graph nodes")


def node_name(node: Any) -> str:
    """The autograd node's class name (`MulBackward0`, `CompiledFunctionBackward`)."""
    try:
        return str(node.name()).rsplit("::", 1)[-1]
    except Exception:  # noqa: BLE001 - a foreign node type must not break the diagnosis
        return type(node).__name__


def node_seq(node: Any) -> int:
    """The node's creation sequence number (AccumulateGrad: 2**64-1)."""
    try:
        return int(node._sequence_nr())
    except Exception:  # noqa: BLE001
        return ACCUMULATE_SEQ


def grad_fn_of(value: Any) -> Any:
    """The graph node behind a backward root: a tensor's `grad_fn`, or a GradientEdge's node."""
    node = getattr(value, "grad_fn", None)
    if node is None:
        node = getattr(value, "node", None)
    return node


def children_of(node: Any) -> list[Any]:
    """The nodes `node` passes gradients to (its `next_functions`, without the empty slots)."""
    try:
        return [child for child, _ in node.next_functions if child is not None]
    except Exception:  # noqa: BLE001
        return []


class SavedProbe:
    """Reads whether a node's saved tensors were freed, without raising where torch allows it.

    C++ nodes expose `_raw_saved_<name>` whose `.data` is None once released (0.3 us); lists of saved
    tensors and custom Python Functions raise torch's error instead (20-50 us), caught here.
    """

    def __init__(self) -> None:
        self._names: dict[type, tuple[str, ...]] = {}

    def names(self, node: Any) -> tuple[str, ...]:
        """The `_raw_saved_*` attribute names of the node's type, cached per type."""
        kind = type(node)
        names = self._names.get(kind)
        if names is None:
            names = tuple(a for a in dir(node) if a.startswith("_raw_saved_"))
            self._names[kind] = names
        return names

    def freed(self, node: Any) -> bool | None:
        """True when released, False when live, None when the node saved nothing we can read."""
        slots = 0
        for name in self.names(node):
            try:
                value = getattr(node, name)
            except RuntimeError:
                return True
            if value is None:
                continue
            if isinstance(value, (list, tuple)):
                for item in value:
                    if item is not None:
                        slots += 1
                        if item.data is not None:
                            return False
                continue
            slots += 1
            if value.data is not None:
                return False
        return True if slots else None

    def saved_tensors(self, node: Any) -> list[tuple[str, Any]]:
        """(name, SavedTensor) pairs of a live node (empty when released or nothing saved)."""
        out: list[tuple[str, Any]] = []
        for name in self.names(node):
            try:
                value = getattr(node, name)
            except RuntimeError:
                continue
            short = name[len("_raw_saved_") :]
            if isinstance(value, (list, tuple)):
                out.extend((f"{short}[{i}]", item) for i, item in enumerate(value) if item is not None)
            elif value is not None:
                out.append((short, value))
        return out


@dataclass
class GraphView:
    """The failing call's graph as far as it was walked, with each node's classification.

    Nodes are numbered in the order first seen; `order` is a post-order (children before parents).
    `dist[i]` is the number of edges from node i to the nearest stale node through non-stale nodes
    (0 for a stale node, INF when none is reachable) and `reach[i]` the stale node it reaches.
    """

    nodes: list[Any]
    index: dict[Any, int]
    seq: list[int]
    children: list[list[int]]
    freed: list[bool | None]
    state: list[int]
    order: list[int]
    roots: list[int]
    threshold: int | None
    dist: list[int] = field(default_factory=list)
    reach: list[int] = field(default_factory=list)

    def name(self, i: int) -> str:
        """The class name of node i."""
        return node_name(self.nodes[i])

    def boundary(self) -> list[int]:
        """Stale nodes reached from a root through non-stale nodes, nearest first."""
        seen = set(self.roots)
        queue = deque(self.roots)
        found: list[int] = []
        while queue:
            i = queue.popleft()
            if self.state[i] == STALE:
                found.append(i)
                continue
            for c in self.children[i]:
                if c not in seen:
                    seen.add(c)
                    queue.append(c)
        return found

    def freed_node(self, start: int, budget: Budget, probe: SavedProbe) -> Any | None:
        """The first node at or below stale node `start` whose saved tensors are released."""
        if self.freed[start]:
            return self.nodes[start]
        seen = {self.nodes[start]}
        queue = deque([self.nodes[start]])
        while queue:
            node = queue.popleft()
            budget.spend()
            for child in children_of(node):
                if child in seen or node_seq(child) == ACCUMULATE_SEQ:
                    continue
                seen.add(child)
                if probe.freed(child):
                    return child
                queue.append(child)
            if len(seen) > 2000:
                break
        return None


def walk(
    roots: Sequence[Any],
    threshold: int | None,
    budget: Budget,
    probe: SavedProbe,
    stale: set[Any] | None = None,
) -> GraphView:
    """Walk the graph below `roots`, classifying nodes against the old/fresh `threshold`.

    Without a threshold (no earlier freeing call is known) every freed node counts as stale. With
    `stale` (the nodes of the graph the culprit call ran through, when its root is known), an old node
    is stale exactly when it is in that set: nodes the failing call freed itself no longer look stale.
    """
    nodes: list[Any] = []
    index: dict[Any, int] = {}
    seq: list[int] = []
    children: list[list[int]] = []
    freed: list[bool | None] = []
    state: list[int] = []
    order: list[int] = []

    def add(node: Any) -> int:
        i = len(nodes)
        index[node] = i
        nodes.append(node)
        seq.append(node_seq(node))
        children.append([])
        freed.append(None)
        state.append(NEUTRAL)
        return i

    root_ids: list[int] = []
    for root in roots:
        if root is not None and root not in index:
            root_ids.append(add(root))
        elif root is not None:
            root_ids.append(index[root])

    stack: list[tuple[int, bool]] = [(i, False) for i in reversed(root_ids)]
    expanded: set[int] = set()
    while stack:
        i, post = stack.pop()
        if post:
            unprobed_old = stale is None and state[i] != STALE and freed[i] is None and _is_old(seq[i], threshold)
            if unprobed_old and any(state[c] == STALE for c in children[i]):
                state[i] = STALE
            order.append(i)
            continue
        if i in expanded:
            continue
        expanded.add(i)
        budget.spend()
        node = nodes[i]
        if seq[i] == ACCUMULATE_SEQ:
            order.append(i)
            continue
        if stale is not None and _is_old(seq[i], threshold):
            if node in stale:
                freed[i] = probe.freed(node)
                state[i] = STALE
                order.append(i)
                continue
        elif _is_old(seq[i], threshold):
            freed[i] = probe.freed(node)
            if freed[i]:
                state[i] = STALE
                order.append(i)
                continue
            if freed[i] is False:
                state[i] = LIVE
        elif threshold is None:
            freed[i] = probe.freed(node)
            if freed[i]:
                state[i] = STALE
                order.append(i)
                continue
        stack.append((i, True))
        for child in children_of(node):
            c = index.get(child)
            if c is None:
                c = add(child)
            children[i].append(c)
            if c not in expanded:
                stack.append((c, False))

    view = GraphView(nodes, index, seq, children, freed, state, order, root_ids, threshold)
    _distances(view)
    return view


def _is_old(seq: int, threshold: int | None) -> bool:
    return threshold is not None and seq <= threshold and seq != ACCUMULATE_SEQ


def _distances(view: GraphView) -> None:
    count = len(view.nodes)
    dist = [INF] * count
    reach = [-1] * count
    for i in view.order:
        if view.state[i] == STALE:
            dist[i] = 0
            reach[i] = i
            continue
        best, target = INF, -1
        for c in view.children[i]:
            if dist[c] + 1 < best:
                best, target = dist[c] + 1, reach[c]
        dist[i] = best
        reach[i] = target
    view.dist = dist
    view.reach = reach


def contains_node(root: Any, targets: Iterable[Any], budget: Budget, limit: int = 100_000) -> bool:
    """True when any node of `targets` is in the graph below `root` (a walk of at most `limit` nodes)."""
    wanted = set(targets)
    if not wanted or root is None:
        return False
    seen = {root}
    stack = [root]
    while stack:
        node = stack.pop()
        if node in wanted:
            return True
        budget.spend()
        if len(seen) > limit:
            return False
        for child in children_of(node):
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return False


def graph_nodes(root: Any, budget: Budget, limit: int = 100_000) -> set[Any]:
    """Every node below `root` (at most `limit`): the skeleton of a graph, freed or not."""
    seen = {root}
    stack = [root]
    while stack and len(seen) <= limit:
        node = stack.pop()
        budget.spend()
        for child in children_of(node):
            if child not in seen and node_seq(child) != ACCUMULATE_SEQ:
                seen.add(child)
                stack.append(child)
    return seen


@dataclass(frozen=True)
class ModifiedSave:
    """A saved tensor whose version moved on since it was saved (the in-place error)."""

    node: Any
    slot: str
    tensors: tuple[Any, ...]


def _public_slot(node: Any, raw_name: str) -> str:
    if raw_name == "_raw_saved_tensors" and hasattr(node, "saved_tensors"):
        return "saved_tensors"
    return "_saved_" + raw_name[len("_raw_saved_") :]


def find_modified_save(roots: Sequence[Any], budget: Budget, probe: SavedProbe) -> ModifiedSave | None:
    """The first saved tensor below `roots` whose unpacking raises the in-place version error."""
    seen = {r for r in roots if r is not None}
    stack = list(seen)
    while stack:
        node = stack.pop()
        budget.spend()
        for raw_name in probe.names(node):
            try:
                getattr(node, _public_slot(node, raw_name))
            except RuntimeError as exc:
                if "modified by an inplace operation" not in str(exc):
                    continue
                raw = getattr(node, raw_name, None)
                items = raw if isinstance(raw, (list, tuple)) else (raw,)
                tensors = tuple(item.data for item in items if item is not None and item.data is not None)
                return ModifiedSave(node, raw_name[len("_raw_saved_") :], tensors)
        for child in children_of(node):
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return None
