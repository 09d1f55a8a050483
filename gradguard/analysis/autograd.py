"""Backward, grad and optimizer steps in the abstract interpreter: what a pass frees, the conflicts
it meets (with the carrier found walking back from the root), needless retains, kept graphs."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import libcst as cst

from gradguard.analysis import knowledge as K
from gradguard.analysis.api.torch_functions import GRAD_CREATE, GRAD_INPUTS, GRAD_OUTPUTS, GRAD_RETAIN
from gradguard.analysis.api.torch_tensor import BACKWARD_CREATE, BACKWARD_RETAIN, CREATE_GRAPH
from gradguard.analysis.conditions import condition_leaves, key_of
from gradguard.analysis.names import chains_overlap
from gradguard.analysis.scopes import assigned_in
from gradguard.analysis.state import OPAQUE, STEPPED_SINCE, ClassInfo, Frame, State, heap_owner
from gradguard.analysis.values import (
    FRESH,
    GENERATIONS,
    PARAMETER_READ,
    UNKNOWN,
    CallInfo,
    CallKind,
    Freed,
    Holder,
    Kind,
    Read,
    Value,
    generation_of,
    node_id,
    owner_group,
    owners_in,
    stamps_of,
    translate,
)

Args = list[tuple[cst.BaseExpression | None, Value]]


@dataclass(frozen=True)
class Accumulation:
    """`total += loss` or `losses.append(loss)` in a loop: a candidate graph kept for logging."""

    holder: Holder
    statement: cst.CSTNode
    item: cst.CSTNode
    container: bool
    loop: cst.CSTNode
    nodes: frozenset[int]
    item_key: tuple[str, ...]


@dataclass(frozen=True)
class Boundary:
    """A read of a holder whose value was already stale when it fed the failing graph."""

    read: Read
    loops: tuple[cst.CSTNode, ...]  # the loops around the creation of the stale value
    old: bool  # the stale value was made by an earlier evaluation of its expression
    # The first read walking back from the root on the way to it (`q_pi` in `-q_pi.mean()`, when the
    # stale value is a layer's output read inside the model's forward), if not `read` itself.
    via: Read | None = None
    # The reads crossed on the way from the root to it, nearest the stale value last (at most 8):
    # the holder that carried it into this iteration may be one of them (`self.ema` written from
    # last step's `per_sample`).
    crossed: tuple[Read, ...] = ()


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
    # The branches the failing call ran under (see `Freed.conditions`).
    conditions: tuple[tuple[cst.CSTNode, bool], ...] = ()
    # The last earlier backward that retained the graph this one goes through.
    retained_by: CallInfo | None = None
    # Not a failure: this call retains its graph, and in a later iteration of a loop that steps an
    # optimizer it goes through what it retained again (`retain_graph=True` hides a stale graph).
    masked: bool = False
    # The failing call's local variables (other than its root) holding stale nodes, with the
    # statements that assigned them: a carrier to name when no read on the way to them is recorded.
    holding: tuple[tuple[str, frozenset[cst.CSTNode], Kind], ...] = ()
    # The entry point whose run met it (what `Evaluator.entry_owner` was).
    entry: int = 0
    # How many times each site had been evaluated then (`State.epochs`): what the node ids recorded in
    # `origins` are translated with to walk the failing graph as it was.
    epochs: tuple[tuple[int, int], ...] = ()
    # The objects of the program's classes that the running functions hold then, as their code
    # names them (`model`, `self.model`), with the heap owner of each: a fix of state kept on an
    # object detaches it through the name the loop's own code has for that object.
    objects: tuple[tuple[str, str], ...] = ()
    # The holders (keys) of boundary reads through which alone the failing root trains: every node
    # of the root not theirs was made from theirs (`buf.sum()`; `Carrier.written_into_loss`).
    exclusive: frozenset[tuple[str, ...]] = frozenset()



class AutogradEvents:
    """What backward-like calls do to the state (a mixin of `Evaluator`)."""

    # -- backward, grad, optimizers ------------------------------------------------------

    def call_info(self, call: cst.CSTNode, kind: CallKind, root_expr: cst.CSTNode | None, retain: bool,
                  create_graph: bool, frame: Frame) -> CallInfo:
        local_call = frame.local_call if frame.module is not None else None
        key = (id(call), tuple(id(loop) for loop in frame.loops), id(local_call[0]) if local_call else None)
        info = self.call_infos.get(key)
        if info is None:
            root_text = ""
            if root_expr is not None:
                root_text = self.code_of(root_expr)
            info = CallInfo(call, self.statement(frame), kind, root_text, root_expr, retain, create_graph,
                            tuple(frame.loops), frame.function.qualname if frame.function else "<module>",
                            local_call)
            self.call_infos[key] = info
        return info

    def code_of(self, node: cst.CSTNode) -> str:
        return cst.Module(body=[]).code_for_node(node)

    def retain_flag(self, call: cst.Call, keyword: str | frozenset[str], positional: Value | None,
                    positional_expr: cst.CSTNode | None = None) -> bool | None:
        """True/False for a literal flag, None when it is an expression the model cannot decide."""
        keywords = (keyword,) if isinstance(keyword, str) else keyword
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in keywords:
                value = arg.value
                if isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
                    return value.value == "True"
                return None
        if positional_expr is not None:
            if isinstance(positional_expr, cst.Name) and positional_expr.value in ("True", "False", "None"):
                return positional_expr.value == "True"
            return None
        return False

    def backward(self, call: cst.Call, roots: Args, kwargs: dict[str, Value], state: State,
                 frame: Frame, positional_retain: Value | None, positional_exprs: list | None = None) -> None:
        """A backward pass over `roots`: report freed nodes it reaches, then free what it traverses."""
        retain_at, create_at = BACKWARD_RETAIN[0], BACKWARD_CREATE[0]
        retain_expr = positional_exprs[retain_at] if positional_exprs and len(positional_exprs) > retain_at else None
        create_expr = positional_exprs[create_at] if positional_exprs and len(positional_exprs) > create_at else None
        retain = self.retain_flag(call, K.RETAIN_GRAPH_KEYWORDS, positional_retain, retain_expr)
        create = self.retain_flag(call, CREATE_GRAPH, None, create_expr)
        keeps = retain is not False or create is not False
        state.unfilled = frozenset()
        for expr, value in roots:
            if value.kind is Kind.TENSOR and not value.grad and not value.nodes and not state.dead:
                self.graphless_backwards.add(call)
            value = self.ensure_graph(expr, value, state, frame)
            info = self.call_info(call, CallKind.BACKWARD, expr, retain is True or create is True, create is True, frame)
            holder = self.holder_of(expr, state, frame) if expr is not None else None
            if holder is not None:
                self.backward_holders.add(holder.key)
                self.root_holders.add(scoped_key(holder, frame))
                self.root_defs[info] = self.root_defs.get(info, frozenset()) | self.defs_of(holder, state, frame)
            self.reach(info, value, state, frame)
            self.release(info, value, keeps, state, frame)

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
        self.synthetic.update(n // GENERATIONS for n in made.top)
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
        else:
            self.touch(holder.key)  # type: ignore[arg-type]
            if holder.key[0] != OPAQUE or holder.key in state.heap:
                state.heap[holder.key] = value  # type: ignore[index]

    def reach(self, info: CallInfo, value: Value, state: State, frame: Frame | None = None) -> None:
        """Record a conflict if the pass reaches nodes that are already freed."""
        if state.dead:
            return
        self.backwarded.update(value.nodes)
        self.last_backward = value.nodes
        self.last_backward_call = info.node
        if value.nodes:
            self.reached_by.setdefault(id(info.node), set()).add(id(self.entry_owner))
        for read in [*value.via, *self.reads_behind(value.top)]:
            current: Read | None = read
            while current is not None:
                self.backward_holders.add(current.holder.key)
                current = current.outer
        retained_by: list[CallInfo] = []
        again: frozenset[int] = frozenset()
        for retained_call, (nodes, stamps) in {**self.retains, **state.retained}.items():
            if retained_call not in state.retained and not _earlier(stamps, state.epochs):
                # Kept on another path (the other arm of a flag, in this iteration or with code
                # this path never ran): not by an earlier backward of this one.
                continue
            # The same call counts too: a retaining backward in a loop over one precomputed graph.
            kept = translate(nodes, stamps, state.epochs) & value.nodes
            if kept:
                self.retains_needed.add(retained_call)
                if retained_call is not info:
                    retained_by.append(retained_call)
                elif info in self.stepped_after_retain and STEPPED_SINCE in state.retained.get(info, ((), {}))[1]:
                    # Reached again after an optimizer step on this path (not merely again, as each
                    # row of a Jacobian goes through one forward with `create_graph=True`).
                    again = kept
        if again and frame is not None and frame.loops:
            self._masked(info, value, again, state, frame)
        stale = frozenset(n for n in value.nodes if n in state.freed)
        self.call_roots.setdefault(info, value.top)
        # Only freed nodes that kept saved tensors make the second pass fail.
        failing = frozenset(n for n in stale if n // GENERATIONS in self.saving)
        if not failing:
            return
        if all(n // GENERATIONS in self.unsure and self._built_outside(n, info) for n in failing):
            # Only graphs of objects that are merely called (a data-building function passed in
            # as an argument is called the same way), built once before the loop: no evidence.
            return
        if self.keyed_items and all(self._through_other_items(n, value, state) for n in failing):
            # Reached only through other named items of an output whose code is not read
            # (`prediction["v"]` after a backward of `prediction["log_pi"]`): separate heads need
            # not share a node of it.
            return
        if value.element and value.top & stale:
            # `losses[i]` taken out of a list of several graphs: which one is not known.
            return
        per_item = frame is not None and all(state.freed[n].call is info for n in failing) and any(
            all(n // GENERATIONS in self.item_sites.get(loop, ()) for n in failing) for loop in frame.loops)
        if per_item and not any(state.freed[n].stepped for n in failing):
            # One backward per item of a list built in an earlier loop (`for r, p in data:`), each
            # item from its own evaluation of the same code: what this pass met freed is another
            # item's graph, taken for this one only because the items are one summary value.
            return
        here = state.partition_key()
        # Freed on some paths only, but on one whose loop-invariant conditions this path assumes
        # too (a flag tested again): the same path.
        # A tensor written in place under a node that kept it, weak only because a path whose loop ran
        # fewer times holds an older generation (the write comes every iteration): written all the same.
        strong = frozenset(n for n in failing if not state.freed[n].weak or (
            not state.freed[n].aged and state.freed[n].assumed and state.freed[n].assumed <= here)
            or (state.freed[n].aged and state.freed[n].written is not None))
        why = state.freed[min(strong or stale)]
        if per_item:
            # ... but an optimizer stepped since the last item's backward: this item's graph, built
            # with the others before the loop, saved weights the step has changed in place.
            step = next((self.step_calls[n] for n in sorted(why.stepped) if n in self.step_calls), why.call)
            why = replace(why, call=step, by_step=True)
        key = (id(info), id(why.call))
        if self._refuted_by_the_module_run(info):
            return
        if key not in self.conflicts or (guessed(self.conflicts[key].why.stepped) and not guessed(why.stepped)) \
                or (strong and self.conflicts[key].why.weak and not why.weak):
            # Met again by an entry that knows which optimizers stepped (`main()` building them, where
            # `train(actor, critic, actor_opt, critic_opt)` run alone had to guess), or on a pass where
            # some of the nodes are surely freed (first met as maybe freed): that one says more.
            boundary = tuple(self.boundary(value, stale, state.epochs, changed=why.by_step))
            if not strong and not self._accumulating(boundary):
                return
            created = self.origins.get(min(stale))
            holding = () if boundary else tuple(
                (name, state.defs[-1].get(name, frozenset()), held.kind) for name, held in state.frames[-1].items()
                if name != info.root_text and held.nodes & stale)
            self.conflicts[key] = Met(info, why.call, value, stale, why, boundary,
                                      created.loops if created is not None else (),
                                      tuple(frame.conditions) if frame is not None else (),
                                      retained_by[-1] if retained_by else None, holding=holding,
                                      entry=id(self.entry_owner), epochs=tuple(state.epochs.items()),
                                      objects=_objects_held(state),
                                      exclusive=self._exclusive_holders(value, boundary, stale, state))

    def _exclusive_holders(self, value: Value, boundary: tuple[Boundary, ...], stale: frozenset[int],
                           state: State) -> frozenset[tuple[str, ...]]:
        """The attributes read on the way to the stale graph through which alone `value` trains:
        every node of it that is not in what the attribute holds now was made from the attribute's
        tensor as a whole (its last nodes), none from a node of its history (`x / (self.scale + eps)`
        also reads `x`, which the scale was written from: not through the scale alone)."""
        found = set()
        for crossing in boundary:
            holder = crossing.read.holder
            held = state.heap.get(holder.key) if holder.kind == "attribute" else None  # type: ignore[arg-type]
            if held is not None and held.top and self._made_from(value.nodes - held.nodes - stale, held.top,
                                                                 state.epochs):
                found.add(holder.key)
        return frozenset(found)

    def _made_from(self, nodes: frozenset[int], sources: frozenset[int], epochs: dict[int, int]) -> bool:
        """Whether every one of `nodes` was made from `sources` alone (or from such nodes)."""
        derived: set[int] = set()
        pending = sorted(nodes)
        while pending:
            waiting = []
            for node in pending:
                origin = self.origins.get(node)
                if origin is None:
                    return False
                parents = origin.now(origin.parents, epochs)
                if not parents:
                    return False  # a graph of its own (a layer's output on data): another way to train
                if parents <= sources | derived:
                    derived.add(node)
                else:
                    waiting.append(node)
            if len(waiting) == len(pending):
                return False
            pending = waiting
        return True

    def _refuted_by_the_module_run(self, info: CallInfo) -> bool:
        """Whether an entry point analysed with arguments nobody passed (`train(nets, optims, loader)`
        alone) meets a conflict at a backward that the module's own run, complete, reached with a graph
        through a call of that very function, with the arguments the program does pass, and found
        nothing wrong with."""
        module = getattr(self, "module", None)
        if module is None or self.entry_owner is module or not getattr(self, "module_complete", False):
            return False
        if id(self.entry_owner) not in self.module_called:
            # The module's run never called this function (`main_stateful()` left to a console
            # script): what it reached of a shared helper says nothing of this caller's arguments.
            return False
        if id(module) not in self.reached_by.get(id(info.node), ()):
            return False
        return not any(met.entry == id(module) and met.failing.node is info.node for met in self.conflicts.values())

    def _through_other_items(self, node: int, value: Value, state: State) -> bool:
        """Whether `value` reaches `node` only through string-keyed items of its output none of
        which (nor any item of the same key) a backward went through yet."""
        site = node // GENERATIONS
        items = [n for n in value.nodes if site in self.keyed_items.get(n // GENERATIONS, ("", ()))[1]]
        if not items or any(n in state.freed for n in items):
            return False
        # The same item read by another expression (`out["v"]` written twice): the evaluation of
        # the same age as the output's node.
        keys = {self.keyed_items[n // GENERATIONS][0] for n in items}
        own = {n // GENERATIONS for n in items}
        return not any(freed % GENERATIONS == node % GENERATIONS and freed // GENERATIONS not in own
                       and self.keyed_items.get(freed // GENERATIONS, ("", ()))[0] in keys
                       and site in self.keyed_items[freed // GENERATIONS][1] for freed in state.freed)

    def _masked(self, info: CallInfo, value: Value, again: frozenset[int], state: State, frame: Frame) -> None:
        """A retaining backward that, after an optimizer step, goes through the graph it retained in an
        earlier iteration again: without `retain_graph=True` it would fail there; with it, every
        iteration backpropagates through that old graph (a rollout's log-probabilities, a tensor
        built once, a state carried across iterations)."""
        key = (id(info), id(info))
        if not info.retain:
            # `retain_graph=keep` computed by the program (every pass but the last): deliberate.
            return
        # Only a graph built outside the loop is known to be an old one: nodes of the loop's own code
        # reached again may stand for this iteration's (generations are folded to reach a fixed point).
        outside = frozenset(n for n in again if self._built_outside(n, info))
        saved = frozenset(n for n in outside if n // GENERATIONS in self.saving)
        if key in self.conflicts or not saved or value.element:
            return
        if all(n // GENERATIONS in self.unsure for n in saved):
            return
        created = self.origins.get(min(saved))
        why = Freed(info, self.stepped_after_retain.get(info, frozenset()), conditions=tuple(frame.conditions))
        self.conflicts[key] = Met(info, info, value, outside, why, tuple(self.boundary(value, outside, state.epochs)),
                                  created.loops if created is not None else (), tuple(frame.conditions),
                                  None, masked=True, entry=id(self.entry_owner))

    def invariant_assumptions(self, state: State, frame: Frame | None) -> frozenset[tuple[str, bool]]:
        """The conditions of this path that every iteration of the loops around takes the same way
        (no loop around assigns what they read): a later path assuming them is the same path."""
        if frame is None or not state.assume:
            return frozenset()
        assigned: set[str] = set()
        for loop in frame.loops:
            names = self.loop_names.get(loop)
            if names is None:
                names = self.loop_names[loop] = assigned_in(loop)
            assigned |= names
        kept = set()
        for key, atom in state.assume.items():
            if not any(chains_overlap(dep, a) for dep in atom.deps for a in assigned):
                kept.add((key, atom.truth))
        # Only a call every one of whose guards is such a condition runs on "the same path" again:
        # under a guard that varies (`step % k == 0`) it runs on some iterations, whatever
        # loop-invariant `if` the path also went through.
        invariant = {key for key, _ in kept}
        guards: set[str | None] = set()
        for statement, _ in frame.conditions:
            test = getattr(statement, "test", None)
            if test is None or not frame.loops:
                continue
            leaves = {key_of(leaf) for leaf in condition_leaves(test)}
            if not leaves <= invariant:
                return frozenset()
            guards |= leaves
        # Only the conditions its guards read: a backward no flag guards is freed on every path of
        # the partition, and where it is only maybe freed that comes from an older iteration.
        return frozenset((key, truth) for key, truth in kept if key in guards)

    def _built_outside(self, node: int, info: CallInfo) -> bool:
        """Whether a node was made outside the innermost loop around the call `info`."""
        origin = self.origins.get(node)
        if origin is None or not info.loops:
            return False
        return info.loops[-1] not in origin.loops

    def _accumulating(self, boundary: tuple[Boundary, ...]) -> bool:
        """Whether a stale graph is reached through a container that grows across iterations, or a
        tensor whose history in-place writes extend (only then is an old node that may or may not be
        freed worth a finding)."""
        for found in boundary:
            for read in (found.read, *found.crossed):
                current: Read | None = read
                while current is not None:
                    key = current.holder.key
                    if (key in self.appended_holders or key in self.grown_holders) and key not in self.reset_holders:
                        return True
                    current = current.outer
        return False

    def boundary(self, value: Value, stale: frozenset[int], epochs: dict[int, int],
                 changed: bool = False) -> list[Boundary]:
        """Reads of a holder whose own value was stale, walking back from a root over fresh nodes.

        `changed`: the stale nodes were changed in place, not freed (they saved what a write then
        changed): where no holder held one of them, the last holder read on the way names it (the
        TD target computed from a target network's output, `target = r + gamma * target_net(s2)...`)."""
        found: list[Boundary] = []
        nearest: list[Boundary] = []
        seen: set[int] = set()
        queue: list[tuple[int, Read | None, tuple[Read, ...]]] = [(n, None, ()) for n in value.top if n not in stale]
        while queue:
            node, via, crossed = queue.pop()
            if node in seen:
                continue
            seen.add(node)
            origin = self.origins.get(node)
            if origin is None:
                continue
            parents = origin.now(origin.parents, epochs)
            if changed and crossed and not nearest and parents & stale:
                reached = self.origins.get(min(parents & stale))
                nearest.append(Boundary(crossed[-1], reached.loops if reached is not None else (),
                                        all(generation_of(n) for n in parents & stale), via, crossed[:-1]))
            # The parents go on the stack first: a node also reached through a read is walked as
            # that read's (the read names the path).
            queue.extend((n, via, crossed) for n in parents if n not in seen and n not in stale)
            for read in origin.reads:
                top = origin.now(read.top, epochs)
                reached = top & stale
                if reached:
                    if all(b.read is not read for b in found):
                        created = self.origins.get(min(reached))
                        found.append(Boundary(read, created.loops if created is not None else (),
                                              all(generation_of(n) for n in reached), via, crossed))
                else:
                    queue.extend((n, via or read, (*crossed, read)[-8:]) for n in top if n not in seen)
        return found or nearest

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

    def release(self, info: CallInfo, value: Value, keeps: bool, state: State,
                frame: Frame | None = None) -> None:
        """Free the nodes a non-retaining pass traversed."""
        if state.dead:
            return
        conditions = tuple(frame.conditions) if frame is not None else ()
        assumed = self.invariant_assumptions(state, frame)
        if keeps:
            previous, _ = self.retains.get(info, (frozenset(), {}))
            kept = (value.nodes, stamps_of(value.nodes, state.epochs))
            if not previous:
                self.retains[info] = kept
            if info not in state.retained:
                state.retained[info] = kept
            return
        self.frees += 1
        self.call_roots[info] = self.call_roots.get(info, frozenset()) | value.top
        if info not in self.call_reads:
            self.call_reads[info] = tuple(self.reads_behind(value.top))
        for node in value.nodes:
            known = state.freed.get(node)
            if known is None or known.weak:
                state.freed[node] = Freed(info, conditions=conditions, assumed=assumed)

    def grad(self, call: cst.Call, args: Args, kwargs: dict[str, Value], state: State, frame: Frame) -> Value:
        """`torch.autograd.grad(outputs, inputs, ...)`: frees the part between outputs and inputs."""
        (_, out_keyword), (in_at, in_keyword) = GRAD_OUTPUTS, GRAD_INPUTS
        (retain_at, retain_keyword), (create_at, create_keyword) = GRAD_RETAIN, GRAD_CREATE
        keyword = next((arg.value for arg in call.args if arg.keyword is not None
                        and arg.keyword.value == out_keyword), None)
        outputs = args[0] if args else (keyword, kwargs.get(out_keyword, UNKNOWN))
        inputs = args[in_at][1] if len(args) > in_at else kwargs.get(in_keyword, UNKNOWN)
        positional = [a for a, _ in args]
        retain = self.retain_flag(call, retain_keyword, None,
                                  positional[retain_at] if len(positional) > retain_at else None)
        create = self.retain_flag(call, create_keyword, None,
                                  positional[create_at] if len(positional) > create_at else None)
        expr, value = outputs
        value = self.ensure_graph(expr, value, state, frame)
        info = self.call_info(call, CallKind.GRAD, expr, retain is True or create is True, create is True, frame)
        self.reach(info, value, state, frame)
        traversed = replace(value, nodes=value.nodes - inputs.nodes)
        self.release(info, traversed, retain is not False or create is not False, state, frame)
        if create is not False:
            return self.derive(call, [(expr, value), (None, inputs)], state, frame, source=True)
        return FRESH

    def optimizer_step(self, optimizer: Value, label: str | None, state: State,
                       call: cst.CSTNode | None = None, frame: Frame | None = None) -> None:
        """Remember which optimizer stepped since each node was freed; the graphs still alive that
        saved the parameters it updates are changed under them (`Freed.by_step`)."""
        if label is not None and label in state.unfilled:
            return  # no gradient since they were reset: the step changes nothing
        owner = optimizer.ref if isinstance(optimizer.ref, str) else (label or "optimizer")
        instance = label.rsplit(".", 1)[0] if label is not None and "." in label else "self"
        if instance != "self":
            # An optimizer an instance built over its own parameters, stepped through that
            # instance (`value.optimizer.step()`): it updates that instance's, no other's.
            owner = owner_group([instance + part[len("self"):] if part == "self" or part.startswith("self.") else part
                                 for part in owners_in(owner)])
        # Inside a method of `agent`, `self.actor` is also `agent.actor`: the modules called from
        # outside `agent` carry that label.
        names: frozenset[str] = frozenset()
        for part in owners_in(owner):
            names |= {part, *self.owner_aliases.get(part, ())}
            held = self.owner_objects.get(part)
            if held is not None and frame is not None:
                # The optimizer was made before the module was handed on (`Trainer(netD, optimizerD)`):
                # where it steps, the module goes by other names (`self.netD`).
                found = self.holders_of(held, state, frame) - names
                if found:
                    self.owner_aliases[part] = self.owner_aliases.get(part, frozenset()) | found
                    names = names | found
        names = names | {self.outside_label(name) for name in names}
        if not owner.startswith("?"):
            self.stepping_groups[owner] = self.stepping_groups.get(owner, frozenset()) | names
        for retained in self.retains:
            self.stepped_after_retain[retained] = self.stepped_after_retain.get(retained, frozenset()) | names
        for retained, (nodes, stamps) in list(state.retained.items()):
            if STEPPED_SINCE not in stamps:
                # This path stepped since that backward kept its graph.
                state.retained[retained] = (nodes, {**stamps, STEPPED_SINCE: 0})
        if self.last_backward_call is not None:
            # "?": an optimizer whose modules are not known stepped after that backward.
            known = isinstance(optimizer.ref, str) and not owner.startswith("?")
            key = (id(self.entry_owner), id(self.last_backward_call))
            self.stepped_after[key] = self.stepped_after.get(key, frozenset()) | names | (
                frozenset() if known else frozenset({"?"}))
        if owner.startswith("?"):
            self.optimizer_owners.add(owner)
        for node, why in list(state.freed.items()):
            if not names <= why.stepped:
                state.freed[node] = replace(why, stepped=why.stepped | names)
        if call is None or frame is None or state.dead:
            return
        stepping = self.call_info(call, CallKind.STEP, None, False, False, frame)
        for name in names:
            self.step_calls[name] = stepping
        # Whose parameters an optimizer of unknown modules updates: those the last backward
        # before its step went through (a step follows the backward that filled its gradients).
        unknown = owner.startswith("?") or not isinstance(optimizer.ref, str)
        if not unknown:
            self.known_steps.add(call)
        # ... and, beyond those nodes, every call of the modules they came from (`critic(...)` in the
        # policy loss, when the critic's loss was the last backward).
        filled = {label for label in map(self._module_label(state), self.last_backward) if label} \
            if unknown else set()
        outermost = {label for label in filled if not any(owns(other, frozenset({label})) and other != label
                                                          for other in filled)}
        if len(outermost) > 1:
            # The backward went through several modules (an actor's loss through the critic): which of
            # them this optimizer updates is not known.
            filled = set()
        touched = []
        for node in state.held_nodes():
            site, generation = divmod(node, GENERATIONS)
            if node in state.freed or generation == GENERATIONS - 1:
                continue  # the summary generation stands for many calls: no evidence
            key = (site, state.epochs.get(site, 0) - generation)
            owners = self.module_calls.get(key)
            if not owners:
                continue
            if unknown:
                label = self.module_labels.get(key)
                if node in self.last_backward or (label is not None and any(
                        owns(label, frozenset({f})) or owns(f, frozenset({label})) for f in filled)):
                    touched.append(node)
            elif any(owns(n, owners) for n in names):
                touched.append(node)
        if not unknown:
            touched.extend(self._parameters_read_of(names, state))
        if not touched:
            return
        step = Freed(stepping, names, conditions=tuple(frame.conditions),
                     assumed=self.invariant_assumptions(state, frame), by_step=True)
        self.frees += 1
        for node in touched:
            state.freed[node] = step

    def _parameters_read_of(self, names: frozenset[str], state: State) -> list[int]:
        """The nodes still alive that kept a parameter of a stepped module, or of a module inside
        it, read directly rather than by calling the module (`Evaluator.parameter_read`)."""
        modules = [held for name in names if (held := self.owner_objects.get(name)) is not None
                   and held.kind is Kind.INSTANCE and isinstance(held.ref, ClassInfo)]
        if not modules or not self.saved_by:
            return []
        marks: set[tuple[int, int]] = set()
        for module in modules:
            for inner in self.submodules_of(module, state, deep=True).elems or (module,):
                if inner.kind is Kind.INSTANCE and isinstance(inner.ref, ClassInfo):
                    marks |= self.saved_by.get((heap_owner(inner), PARAMETER_READ), set())
        if not marks:
            return []
        held = state.held_nodes()
        touched = []
        for site, count in marks:
            generation = state.epochs.get(site, 0) - count
            if 0 <= generation < GENERATIONS - 1:  # the summary generation stands for many: no evidence
                node = node_id(site, generation)
                if node in held and node not in state.freed:
                    touched.append(node)
        return touched

    def _module_label(self, state: State) -> Callable[[int], str | None]:
        """For a node, the label of the module call that made it, if it was one."""
        def label(node: int) -> str | None:
            site, generation = divmod(node, GENERATIONS)
            return self.module_labels.get((site, state.epochs.get(site, 0) - generation))
        return label

    def note_accumulation(self, target: cst.BaseExpression, item: Value, item_expr: cst.CSTNode | None,
                          statement: cst.CSTNode, state: State, frame: Frame, container: bool) -> None:
        """`total += loss` or `losses.append(loss)` inside a loop, kept for GG010."""
        if not frame.loops or not item.nodes or item_expr is None:
            return
        if _runs_in_one_iteration(frame):
            return  # `if step == 0: ys.append(y)`: a buffer filled once, not a log that grows
        holder = self.holder_of(target, state, frame)
        if holder is None:
            return
        if container:
            self.appended_holders.add(holder.key)
        item_holder = self.holder_of(item_expr, state, frame) if isinstance(item_expr, cst.BaseExpression) else None
        if item_holder is None:
            return
        previous = self.accumulations.get(statement)
        nodes = item.nodes | (previous.nodes if previous else frozenset())
        self.accumulations[statement] = Accumulation(holder, statement, item_expr, container,
                                                     frame.loops[-1], nodes, scoped_key(item_holder, frame))




def _runs_in_one_iteration(frame: Frame) -> bool:
    """Whether the code running now is guarded by `v == literal` for the target `v` of a `for`
    loop around it: it runs in one iteration of that loop only."""
    targets: set[str] = set()
    for loop in frame.loops:
        if isinstance(loop, cst.For) and isinstance(loop.target, cst.Name):
            targets.add(loop.target.value)
    if not targets:
        return False
    for statement, arm in frame.conditions:
        test = getattr(statement, "test", None)
        if not arm or not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
            continue
        target = test.comparisons[0]
        if not isinstance(target.operator, cst.Equal):
            continue
        sides = (test.left, target.comparator)
        if any(isinstance(a, cst.Name) and a.value in targets
               and isinstance(b, (cst.Integer, cst.SimpleString)) for a, b in (sides, sides[::-1])):
            return True
    return False


def scoped_key(holder: Holder, frame: Frame) -> tuple[str, ...]:
    """A holder's key with a variable's function in front: two functions' locals of one name
    (`event_t` in a helper and in its caller) are different variables."""
    if holder.kind != "variable":
        return holder.key
    return (frame.function.qualname if frame.function else "<module>", *holder.key)


def guessed(stepped: frozenset[str]) -> bool:
    """Whether every optimizer stepped is one whose modules are not known (`?optimizer`)."""
    return bool(stepped) and all(owner.startswith("?") for owner in stepped)


def owns(owner: str, labels: frozenset[str]) -> bool:
    """Whether an optimizer of `owner`'s parameters updates a module called as one of `labels`
    (`netD`, or `self.critic` for an optimizer of `self.critic.parameters()`)."""
    return any(label == owner or label.startswith(owner + ".") for label in labels)


def _earlier(stamps: dict[int, int], epochs: dict[int, int]) -> bool:
    """Whether sites evaluated `stamps` times can be an earlier point of a path now at `epochs`:
    none evaluated more often than now, some less."""
    behind = False
    for site, epoch in stamps.items():
        now = epochs.get(site, 0)
        if epoch > now:
            return False
        behind = behind or epoch < now
    return behind


def _objects_held(state: State) -> tuple[tuple[str, str], ...]:
    """Every object of the program's classes a frame of `state` holds in a variable, or `self` holds
    in an attribute, with its heap owner."""
    found: list[tuple[str, str]] = []
    for frame in state.frames:
        for name, value in frame.items():
            if value.kind is not Kind.INSTANCE or not isinstance(value.ref, ClassInfo):
                continue
            owner = heap_owner(value)
            found.append((name, owner))
            if name == "self":
                found.extend((f"self.{attr}", heap_owner(held)) for (key, attr), held in state.heap.items()
                             if key == owner and isinstance(attr, str) and held.kind is Kind.INSTANCE
                             and isinstance(held.ref, ClassInfo))
    return tuple(dict.fromkeys(found))
