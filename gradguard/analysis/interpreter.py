"""The abstract interpreter: runs a file's statements over abstract values to find freed graphs.

It follows statements in order, both arms of every branch, loops to a fixed point (so the second
iteration sees what the first left behind), calls of functions, methods and classes of the same file
by inlining them with the argument values, closures called by optimizers, and object attributes
(`self.h`) in a heap keyed by class. Expressions are evaluated in `expressions.py`.
"""

from __future__ import annotations

import ast

import itertools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache

import libcst as cst

from gradguard.analysis import api
from gradguard.analysis import knowledge as K
from gradguard.analysis.api import TRAINING, Cache, Collects, lookup
from gradguard.analysis.calls import viewed_base
from gradguard.analysis.conditions import (
    EQUALITY,
    MAX_PARTS,
    Atom,
    Membership,
    chains_of,
    equality_of,
    flag_key,
    flag_test,
    key_of,
    strip_not,
)
from gradguard.analysis.expressions import (
    FALSE_FLAG,
    FLAG,
    TRUE_FLAG,
    BudgetExceeded,
    Evaluator,
    TimeLimit,
)
from gradguard.analysis.names import canonical, dotted, import_bindings, qualify
from gradguard.analysis.scopes import assigned_in, slots_of_counter
from gradguard.analysis.state import OPAQUE, ClassInfo, Frame, FunctionInfo, HeapKey, State, heap_owner, invalidated
from gradguard.analysis.summaries import Recorder
from gradguard.analysis.values import (
    CAPTURED,
    FRESH,
    GENERATIONS,
    NONE,
    UNKNOWN,
    Kind,
    Value,
    cut,
    join,
    members,
    known_objects,
)
from gradguard.parse import newlines_in, nodes_of, walk

# Passes after which a loop's states are compared widened (every earlier generation of the
# loop's own sites folded into one: a pass that would only age them changes nothing), and the
# passes after which a loop that still changes is given up on (recorded, never silent).
WIDEN_AFTER = 2
MAX_LOOP_PASSES = 12
# The key prefix of a condition as the previous iteration of a loop took it.
_PREVIOUS = "previous iteration: "


class Interpreter(Evaluator):
    """Statement execution on top of the expression evaluator."""

    # The linted file's own top-level functions, each also analysed as an entry (set by `Program`).
    top_functions: list[FunctionInfo]
    # The call an expression statement is running, its result unused (`main(args)`).
    _discarded: cst.BaseExpression | None = None

    # -- blocks and statements -------------------------------------------------------------

    def exec_block(self, body: cst.BaseSuite | list[cst.BaseStatement] | tuple, state: State,
                   frame: Frame, owner: cst.CSTNode) -> None:
        """Run a block of statements in place on `state` (its paths joined at the end)."""
        parts = self.exec_parts(body, state, frame, owner)
        if len(parts) == 1 and parts[0] is state:
            return
        self.merge_into(state, parts)

    def exec_parts(self, body: cst.BaseSuite | list[cst.BaseStatement] | tuple, state: State,
                   frame: Frame, owner: cst.CSTNode) -> list[State]:
        """Run a block from `state` (which it may change); the live states it ends in, one per
        set of branch conditions still told apart (see `conditions.py`)."""
        statements = body.body if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)) else body
        parts = [state]
        guarded = owner is self.entry_owner and not self.guarding
        for statement in statements:
            parts = self.guarded_parts(statement, parts, frame, owner) if guarded else \
                self.run_statement(statement, parts, frame, owner)
            if not parts:
                return []
        return [part for part in parts if not part.dead]

    def run_statement(self, statement: cst.BaseStatement, parts: list[State], frame: Frame,
                      owner: cst.CSTNode) -> list[State]:
        following: list[State] = []
        for part in parts:
            if part.dead:
                continue
            frame.statements.append((owner, statement))
            try:
                following.extend(self.statement_parts(statement, part, frame))
            finally:
                frame.statements.pop()
        return self.regroup(following)

    def guarded_parts(self, statement: cst.BaseStatement, parts: list[State], frame: Frame,
                      owner: cst.CSTNode) -> list[State]:
        """A statement of an entry point's own body, with a step budget of its own: one that uses it
        up is skipped (what it assigns becomes unknown, what it met is dropped: a loop cut short
        before its fixed point is a guess) and noted, and the analysis goes on after it. So a
        finding never depends on how costly unrelated code elsewhere in the function is."""
        saved = [part.copy() for part in parts]
        met, accumulated = set(self.conflicts), set(self.accumulations)
        self.steps = 0
        self.renamed.clear()
        self.step_limit = self.max_steps + self.steps_per_line * newlines_in(statement)
        self.guarding = True
        try:
            return self.run_statement(statement, parts, frame, owner)
        except TimeLimit:
            raise
        except BudgetExceeded:
            self.incomplete.append(("budget", statement, frame.function.qualname if frame.function else "<module>"))
            for key in set(self.conflicts) - met:
                del self.conflicts[key]
            for key in set(self.accumulations) - accumulated:
                del self.accumulations[key]
            for part in saved:
                self.forget_targets(statement, part, frame)
            return saved
        finally:
            self.guarding = False

    def forget_targets(self, statement: cst.CSTNode, state: State, frame: Frame) -> None:
        """What a statement the analysis could not follow assigns becomes unknown."""
        self.steps = 0
        for target in _assignment_targets(statement):
            try:
                self.assign(target, UNKNOWN, state, frame, statement, None)
            except (BudgetExceeded, RecursionError):
                continue

    def statement_parts(self, statement: cst.CSTNode, state: State, frame: Frame) -> list[State]:
        """Run one statement from `state`; the states it ends in."""
        node_type = type(statement)  # libcst's node classes are ABCs: `isinstance` is slow
        if node_type is cst.If:
            self.tick()
            return self.if_parts(statement, state, frame)
        if node_type is cst.For:
            self.tick()
            return self.for_parts(statement, state, frame)
        if node_type is cst.While:
            self.tick()
            return self.while_parts(statement, state, frame)
        if node_type is cst.With:
            self.tick()
            return self.with_parts(statement, state, frame)
        if node_type is cst.Try:
            self.tick()
            return self.try_parts(statement, state, frame)
        if not isinstance(frame.call_site, cst.Call) and self._calls_something(statement):
            return self.split_parts(statement, state, frame)
        self.exec_statement(statement, state, frame)
        return [state]

    def split_parts(self, statement: cst.CSTNode, state: State, frame: Frame) -> list[State]:
        """A statement of an entry's (or the module's) own body that calls into the program: when the
        paths inside the call disagreed on a flag of an object (`if self.automatic_entropy_tuning:`
        in `agent.update(...)`, the attribute never reassigned), the statement is run again from
        where it started once per truth of that flag, and each run is a part of its own. Later
        iterations then see the flag decided, so what one path stored on the object is never met by
        the other path's code (a tensor `self.alpha` only where the entropy is tuned)."""
        before = state.copy()
        met, accumulated = set(self.conflicts), set(self.accumulations)
        self.split_atoms = {}
        outer, self.arm_loops = self.arm_loops, len(frame.loops)
        try:
            self.exec_statement(statement, state, frame)
        finally:
            self.arm_loops = outer
        atoms = [atom for key, atom in self.split_atoms.items()
                 if key not in before.assume and key not in self.unsplittable][:MAX_SPLIT_ATOMS]
        self.split_atoms = {}
        if not atoms or state.dead:
            return [state]
        first_met = {key: self.conflicts.pop(key) for key in set(self.conflicts) - met}
        first_accumulated = {key: self.accumulations.pop(key) for key in set(self.accumulations) - accumulated}
        parts: list[State] = []
        for truths in itertools.product((True, False), repeat=len(atoms)):
            part = before.copy()
            for atom, truth in zip(atoms, truths, strict=True):
                self.atom_seq += 1
                part.assume[atom.key] = replace(atom, truth=truth, seq=self.atom_seq)
            outer, self.arm_loops = self.arm_loops, len(frame.loops)
            try:
                self.exec_statement(statement, part, frame)
            finally:
                self.arm_loops = outer
            self.split_atoms = {}
            parts.append(part)
        if any(atom.key in part.assume for part in parts for atom in atoms):
            return parts
        # The statement itself set the flag (`agent = Agent(args)`): nothing to tell apart after it.
        for key in set(self.conflicts) - met:
            del self.conflicts[key]
        for key in set(self.accumulations) - accumulated:
            del self.accumulations[key]
        self.conflicts.update(first_met)
        self.accumulations.update(first_accumulated)
        return [state]

    def _calls_something(self, statement: cst.CSTNode) -> bool:
        found = self.calling.get(statement)
        if found is None:
            found = self.calling[statement] = isinstance(statement, cst.SimpleStatementLine) \
                and next(nodes_of(statement, cst.Call), None) is not None
        return found

    def regroup(self, parts: list[State], forgotten: set[str] | None = None) -> list[State]:
        """Join the states that no condition tells apart; keep at most `MAX_PARTS`, forgetting
        the oldest conditions first. With `forgotten` (a loop's), the conditions forgotten before
        stay forgotten and those forgotten now are added: a loop's partitions then only ever
        coarsen from one pass to the next, and its fixed point is reached."""
        live = [part for part in parts if not part.dead]
        if forgotten:
            for part in live:
                for key in forgotten.intersection(part.assume):
                    del part.assume[key]
        if len(live) <= 1:
            return live
        while True:
            groups: dict[frozenset[tuple[str, bool]], list[State]] = {}
            for part in live:
                groups.setdefault(part.partition_key(), []).append(part)
            if len(groups) <= MAX_PARTS:
                break
            dropped = self._least_separating(live)
            if dropped.startswith((OBJECT_ATOM, ARM_ATOM)):
                # Too many paths to keep this flag apart: never split a statement on it again.
                self.unsplittable.add(dropped)
            if forgotten is not None:
                forgotten.add(dropped)
            for part in live:
                part.assume.pop(dropped, None)
        result: list[State] = []
        for group in groups.values():
            joined = group[0] if len(group) == 1 else State.join_all(group)
            if joined is None:
                continue
            if forgotten is None:
                # Paths that differ in plain values only are one path from here on.
                for index, kept in enumerate(result):
                    if _plain_separation(kept, joined) and kept.interchangeable(joined):
                        result[index] = State.join_all([kept, joined])  # type: ignore[assignment]
                        break
                else:
                    result.append(joined)
            else:
                result.append(joined)
        return result

    @staticmethod
    def _least_separating(parts: list[State]) -> str:
        """The condition to forget when there are too many partitions: the one whose partitions
        differ least in what is freed (the oldest among equals). Which branch of a loop-invariant
        `if` ran matters less than whether the previous iteration ran the freeing backward.
        A condition every partition takes the same way tells none apart: forgetting it would join
        nothing (the caller's conditions, as seen from the branches of a call it made). Paths that
        bind different names are told apart too: joined, a name bound on one arm only would seem
        bound on the other (`if args.task in (...): aux = ...` read again under `else`)."""
        def told_apart_by(part: State) -> tuple[frozenset[int], tuple[frozenset[str], ...]]:
            return frozenset(part.freed), tuple(frozenset(frame) for frame in part.frames)

        best: tuple[tuple[bool, int, int], str] | None = None
        seqs: dict[str, int] = {}
        for part in parts:
            for key, atom in part.assume.items():
                seqs[key] = min(atom.seq, seqs.get(key, atom.seq))
        first = parts[0].assume
        shared = {key for key, atom in first.items()
                  if all((theirs := part.assume.get(key)) is not None and theirs.truth == atom.truth
                         for part in parts[1:])}
        if len(shared) < len(seqs):
            for key in shared:
                del seqs[key]
        facts = [(part.partition_key(), told_apart_by(part)) for part in parts]
        groups = len({partition for partition, _ in facts})
        for key, seq in seqs.items():
            merged: dict[frozenset[tuple[str, bool]], set[tuple[frozenset[int], tuple[frozenset[str], ...]]]] = {}
            for partition, freed in facts:
                rest = frozenset(item for item in partition if item[0] != key)
                merged.setdefault(rest, set()).add(freed)
            separated = sum(len(facts) > 1 for facts in merged.values())
            # A condition the others decide (`x in ("a", "b")` beside `x == "a"`) joins no partition:
            # forgetting it first would lose what it says once they are forgotten in turn.
            rank = (len(merged) == groups, separated, seq)
            if best is None or rank < best[0]:
                best = (rank, key)
        assert best is not None
        return best[1]

    def exec_statement(self, statement: cst.CSTNode, state: State, frame: Frame) -> None:
        """Run one statement in place on `state`; one nested too deeply for the analysis to follow
        is recorded as such and its targets become unknown, and the analysis goes on after it."""
        self.tick()
        try:
            self._exec_statement(statement, state, frame)
        except RecursionError:
            self.incomplete.append(("recursion", statement,
                                    frame.function.qualname if frame.function else "<module>"))
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
                        [small.target] if isinstance(small, (cst.AnnAssign, cst.AugAssign)) else []
                    for target in targets:
                        for name in _target_names(target):
                            self.store_name(name, UNKNOWN, state, frame, statement)

    def code_of(self, node: cst.CSTNode) -> str:
        code = self.codes.get(node)
        if code is None:
            code = self.codes[node] = cst.Module([]).code_for_node(node)
        return code

    def _exec_statement(self, statement: cst.CSTNode, state: State, frame: Frame) -> None:
        node_type = type(statement)  # libcst's node classes are ABCs: `isinstance` is slow
        if node_type is cst.SimpleStatementLine:
            for small in statement.body:
                if state.dead:
                    return
                self.exec_small(small, statement, state, frame)
        elif node_type is cst.If:
            self.exec_if(statement, state, frame)
        elif node_type is cst.For:
            self.exec_for(statement, state, frame)
        elif node_type is cst.While:
            self.exec_while(statement, state, frame)
        elif node_type is cst.With:
            self.exec_with(statement, state, frame)
        elif node_type is cst.Try:
            self.exec_try(statement, state, frame)
        elif node_type is cst.FunctionDef:
            self.define_function(statement, state, frame)
        elif node_type is cst.ClassDef:
            info = self.classes.get(statement)
            if info is not None:
                self.store_name(statement.name.value, Value(Kind.CLASS, ref=info), state, frame, statement)
        elif node_type is cst.Match:
            self.exec_match(statement, state, frame)
        elif isinstance(statement, cst.BaseSmallStatement):
            # A statement of a one-line suite (`if flag: seed = 1`, `if done: break`): its own line.
            self.exec_small(statement, statement, state, frame)  # type: ignore[arg-type]
        elif hasattr(statement, "body"):
            self.exec_block(statement.body, state, frame, statement)  # type: ignore[attr-defined]

    def exec_small(self, small: cst.BaseSmallStatement, line: cst.SimpleStatementLine, state: State,
                   frame: Frame) -> None:
        """Run one small statement of a simple statement line."""
        if isinstance(small, cst.Expr):
            outer, self._discarded = self._discarded, small.value
            try:
                self.eval(small.value, state, frame)
            finally:
                self._discarded = outer
        elif isinstance(small, cst.Assign):
            value = self.eval(small.value, state, frame)
            if value.kind in _MADE_OBJECTS and isinstance(small.value, cst.Call):
                self.making.add(line)
            for target in small.targets:
                self.assign(target.target, value, state, frame, line, small.value)
            if len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) and not state.dead:
                self.assume_flag(small.targets[0].target.value, small.value, state, frame)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                value = self.eval(small.value, state, frame)
                self.assign(small.target, value, state, frame, line, small.value)
        elif isinstance(small, cst.AugAssign):
            self.exec_augassign(small, line, state, frame)
        elif isinstance(small, cst.Return):
            value = self.eval(small.value, state, frame) if small.value is not None else NONE
            if isinstance(small.value, cst.Attribute) and value.nodes and not value.via:
                # `return self.feats`: what the caller does with it, it does with that attribute.
                value = replace(value, via=tuple(self.reads_of([(small.value, value)], state, frame, None)))
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
        elif isinstance(small, (cst.Global, cst.Nonlocal)):
            frame.global_names.update(n.name.value for n in small.names)
        elif isinstance(small, cst.Del):
            self.exec_del(small.target, state, frame, line)
        elif isinstance(small, cst.Assert):
            self.eval(small.test, state, frame)

    def exec_augassign(self, small: cst.AugAssign, line: cst.SimpleStatementLine, state: State,
                       frame: Frame) -> None:
        right = self.eval(small.value, state, frame)
        left = self.eval(small.target, state, frame)
        # `t *= m` on a tensor writes it in place (a number, a list or a tuple is bound anew).
        in_place = left.kind is Kind.TENSOR
        if in_place:
            holder = self.holder_of(viewed_base(small.target), state, frame)
            if holder is not None:
                self.modified_in_place(holder, small, state, frame)
        if left.kind in (Kind.LIST, Kind.DICT) or (left.elems is not None and left.kind is Kind.TUPLE):
            combined = self.container_add(left, right)
        else:
            operands = [(small.target, left), (small.value, right)]
            combined = self.derive(small, operands, state, frame, in_place=in_place)
            if in_place and combined.kind is not Kind.TENSOR:
                combined = FRESH if combined is UNKNOWN else replace(combined, kind=Kind.TENSOR)  # still the tensor
        self.assign(small.target, combined, state, frame, line, small, rebinds=not in_place)
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
        self.merge_into(state, self.if_parts(statement, state, frame))

    def if_parts(self, statement: cst.If, state: State, frame: Frame, head: bool = True) -> list[State]:
        """Both arms of an `if`, each assuming its condition; an arm the path already decided
        against is not run."""
        outcomes = self._if_parts(statement, state, frame)
        if head and frame.loops:
            self.unbind_other_worlds(statement, outcomes, frame)
        return outcomes

    def unbind_other_worlds(self, statement: cst.If, outcomes: list[State], frame: Frame) -> None:
        """A path that took no arm binding a name, on a test no assignment in the loop changes,
        holds that name only from an earlier iteration that took the arm, which cannot be: on it the
        name is unbound (`if num_return == 2: spk, mem = net(x)` with no `else`). Unbinding it
        there keeps a join with the paths that bound it from reviving the stale value."""
        names = self.if_names.get(statement)
        if names is None:
            names = self.if_names[statement] = frozenset(n for n in assigned_in(statement) if "." not in n)
        for part in outcomes:
            if part.dead or not part.assume:
                continue
            top = part.frames[-1]
            for name in names:
                if name in top and self.bound_in_another_world(name, part, frame):
                    del top[name]
                    part.defs[-1].pop(name, None)

    def _if_parts(self, statement: cst.If, state: State, frame: Frame) -> list[State]:
        self.eval(statement.test, state, frame)
        if state.dead:
            return []
        test = self.test_of(statement.test, state, frame)
        self.assume_object_flags(test, state, frame)
        decided = self.decided_test(test, state, frame)
        arm = self.arm_key(statement, frame, test, state)
        if arm is not None:
            self.consult(arm)
        if decided is None and arm is not None and arm in state.assume:
            decided = state.assume[arm].truth
        if decided is None:
            branch, other = state.copy(), state
            self.refine_none(test, branch, other, frame)
            self.assume_test(test, True, branch, frame)
            self.assume_test(test, False, other, frame)
            if arm is not None:
                for part, truth in ((branch, True), (other, False)):
                    self.atom_seq += 1
                    part.assume[arm] = Atom(arm, truth, frozenset(), frozenset(), len(part.frames), self.atom_seq,
                                            self.code_of(statement.test))
        else:
            branch = other = state
        outcomes: list[State] = []
        frees = self.frees
        if decided is not False:
            frame.conditions.append((statement, True))
            try:
                outcomes.extend(self.exec_parts(statement.body, branch, frame, statement))
            finally:
                frame.conditions.pop()
        if decided is not True:
            frame.conditions.append((statement, False))
            try:
                if isinstance(statement.orelse, cst.If):
                    outcomes.extend(self.if_parts(statement.orelse, other, frame, head=False))
                elif isinstance(statement.orelse, cst.Else):
                    outcomes.extend(self.exec_parts(statement.orelse.body, other, frame, statement.orelse))
                else:
                    outcomes.append(other)
            finally:
                frame.conditions.pop()
        if arm is not None and self.frees != frees:
            self.freeing_arms.add(arm)
        elif arm is not None and branch is not other:
            # Neither arm frees or steps: nothing for a later backward to tell the paths apart by.
            for part in outcomes:
                part.assume.pop(arm, None)
        return outcomes

    def assume_flag(self, name: str, value: cst.BaseExpression, state: State, frame: Frame) -> None:
        """`flag = True if (a and b) else False`: until `flag` or what the test reads is assigned
        again, `if flag:` is that test (`test_of`), taken as the path took it or tied to it."""
        found = flag_test(value)
        if found is None:
            return
        test, positive = found
        key = flag_key(name, test)
        if key is None or any(dotted(chain) == name for chain in chains_of(test)):
            return  # `done = done or t >= T`: the test reads the flag's old value, another variable
        self.flag_tests.setdefault(key, (test, positive))
        deps, heap = self.test_reads(test, state, frame)
        self.atom_seq += 1
        state.assume[key] = Atom(key, True, frozenset({name, *deps}), frozenset(heap), len(state.frames),
                                 self.atom_seq, f"{name} = {self.code_of(value)}")

    def decided_test(self, test: cst.BaseExpression, state: State, frame: Frame) -> bool | None:
        """The truth of a test on the path to `state`, when the path decides it: by its conditions,
        by what the values it tests are (`x is None`, `hasattr`, `isinstance`, `type(x) == list`),
        and `and`/`or`/`not` of such tests."""
        test = self.test_of(test, state, frame)
        decided = self.decide(test, state)
        if decided is None:
            decided = self.attribute_test(test, state, frame)
        if decided is None:
            decided = self.none_test(test, state, frame)
        if decided is None:
            decided = self.type_test(test, state, frame)
        if decided is None:
            expr, positive = strip_not(test)
            if isinstance(expr, cst.BooleanOperation):
                both = isinstance(expr.operator, cst.And)
                left = self.decided_test(expr.left, state, frame)
                if left is not None and left is not both:
                    return left == positive  # `False and ...`, `True or ...`
                right = self.decided_test(expr.right, state, frame)
                if right is not None and right is not both:
                    return right == positive
                if left is both and right is both:
                    return both == positive
        return decided

    def type_test(self, test: cst.BaseExpression, state: State, frame: Frame) -> bool | None:
        """`type(x) == list`, `isinstance(x, (list, tuple))` of a tensor, a module, an optimizer or
        None: never a container (a function taking either checks which one it was given)."""
        expr, positive = strip_not(test)
        if isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1 and isinstance(expr.left, cst.Call) \
                and len(expr.left.args) == 1 and expr.left.args[0].keyword is None:
            operator = expr.comparisons[0].operator
            if not isinstance(operator, (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual)):
                return None
            called = self.qualified(expr.left.func, state, frame)
            fact = lookup(called) if called is not None else None
            if fact is None or not fact.type_of:
                return None
            tested, classes = expr.left.args[0].value, [expr.comparisons[0].comparator]
            equal = isinstance(operator, (cst.Is, cst.Equal))
        elif isinstance(expr, cst.Call) and len(expr.args) == 2 \
                and self.qualified(expr.func, state, frame) in K.CLASS_TESTS:
            tested, wanted = expr.args[0].value, expr.args[1].value
            classes = [e.value for e in wanted.elements] if isinstance(wanted, cst.Tuple) else [wanted]
            equal = True
        else:
            return None
        for cls in classes:
            name = self.qualified(cls, state, frame)
            fact = lookup(name) if name is not None else None
            if fact is None or fact.collects not in (Collects.LIST, Collects.TUPLE, Collects.DICT):
                return None
        value = self.peek(tested, state, frame)
        if value is None or value.kind not in _NEVER_CONTAINERS or value.maybe_none and value.kind is not Kind.NONE:
            return None
        return (not equal) == positive

    def test_of(self, test: cst.BaseExpression, state: State, frame: Frame) -> cst.BaseExpression:
        """The test as conditions know it: a flag assigned from a test is that test (`assume_flag`);
        a call of a method of the object that only returns a test of the object's own attributes
        (`if self.time_to_learn():` whose body is `return self.done`) is that test, written on the
        receiver (`self.done`), so it is tied to the same test elsewhere (`while not self.done:`)."""
        expr, positive = strip_not(test)
        if isinstance(expr, cst.Name) and state.assume:
            flag = self.flag_of(expr.value, state)
            if flag is not None:
                flag_test_expr, holds = flag
                return flag_test_expr if positive == holds else self.negation(flag_test_expr)
        if not (isinstance(expr, cst.Call) and not expr.args and isinstance(expr.func, cst.Attribute)):
            return test
        receiver = self.peek(expr.func.value, state, frame)
        if receiver is None or receiver.kind is not Kind.INSTANCE or not isinstance(receiver.ref, ClassInfo):
            return test
        method = self.method_of(receiver.ref, expr.func.attr.value)
        if method is None or not isinstance(method.node, cst.FunctionDef):
            return test
        key = (expr, method.node)
        if key not in self.getter_tests:
            self.getter_tests[key] = _getter_test(method.node, expr.func.value)
        found = self.getter_tests[key]
        if found is None:
            return test
        return found if positive else cst.UnaryOperation(cst.Not(), found)

    def arm_key(self, statement: cst.If, frame: Frame, test: cst.BaseExpression | None = None,
                state: State | None = None) -> str | None:
        """The key of the arm atom of a branch whose arms the paths after it must keep apart when one
        of them frees a graph: a branch of a called function run once per call of a statement being
        split (`split_parts`), and a branch whose test no condition atom names (it calls,
        `if should_log(step):`), whose truth no later test can be tied to; None for any other."""
        called_once = self.arm_loops is not None and frame.function is not None \
            and isinstance(frame.call_site, cst.Call) and len(frame.loops) == self.arm_loops
        tested = strip_not(test if test is not None else statement.test)[0]
        if not called_once and key_of(tested) is not None:
            return None
        if called_once and state is not None and self.tests_object_settings(tested, state, frame):
            # A test of an object's settings (`if self.automatic_entropy_tuning:`): its own condition,
            # kept on the object across calls and iterations, tells the paths apart; an arm taken
            # anew at each call would let an iteration take the other arm than the one before.
            return None
        return f"{ARM_ATOM}{id(statement)}"

    def attribute_test(self, test: cst.BaseExpression, state: State, frame: Frame) -> bool | None:
        """`hasattr(m, "reset")` on an object of a project class that defines `reset`: True (a
        class that does not define it may still get it at run time: undecided)."""
        expr, positive = strip_not(test)
        if isinstance(expr, cst.Call) and len(expr.args) == 2 \
                and self.qualified(expr.func, state, frame) in K.CLASS_TESTS:
            decided = self.class_test(expr.args[0].value, expr.args[1].value, state, frame)
            return None if decided is None else decided == positive
        if not (isinstance(expr, cst.Call) and len(expr.args) == 2
                and isinstance(expr.args[1].value, cst.SimpleString)):
            return None
        if self.qualified(expr.func, state, frame) not in K.ATTRIBUTE_TESTS:
            return None
        owner = self.peek(expr.args[0].value, state, frame)
        if owner is None or owner.kind is not Kind.INSTANCE or not isinstance(owner.ref, ClassInfo):
            return None
        if self.method_of(owner.ref, expr.args[1].value.raw_value) is None:
            return None
        return positive

    def assume_object_flags(self, test: cst.BaseExpression, state: State, frame: Frame) -> None:
        """`self.learned_freq` in a test, where the object's attribute was set to a literal flag: the
        path assumes its truth (in this method's scope), so the test, or a part of it, is decided.
        Likewise a test of the object's settings an earlier call of its methods took a way
        (`object_condition`)."""
        self.assume_object_conditions(test, state, frame)
        for chain in chains_of(test):
            if not (isinstance(chain, cst.Attribute) and isinstance(chain.value, (cst.Name, cst.Attribute))):
                continue
            owner = self.peek(chain.value, state, frame)
            if owner is None or owner.kind is not Kind.INSTANCE or not isinstance(owner.ref, ClassInfo):
                continue
            key = key_of(chain)
            object_key = object_atom_key(owner, chain.attr.value)
            self.consult(*(k for k in (key, object_key) if k is not None))
            known = state.assume.get(object_key) if object_key is not None else None
            if known is not None and key is not None and key not in state.assume:
                self.atom_seq += 1
                state.assume[key] = Atom(key, known.truth, frozenset({key}), known.heap, len(state.frames),
                                         self.atom_seq, key)
                continue
            self.touch((f"{FLAG}{heap_owner(owner)}", chain.attr.value))
            flag = state.heap.get((f"{FLAG}{heap_owner(owner)}", chain.attr.value))  # type: ignore[call-overload]
            # Only the flag values themselves: paths that set it differently join into another value.
            if (flag is not TRUE_FLAG and flag is not FALSE_FLAG) or key is None or key in state.assume:
                continue
            self.atom_seq += 1
            state.assume[key] = Atom(key, flag is TRUE_FLAG, frozenset({key}),
                                     frozenset({(heap_owner(owner), chain.attr.value)}), len(state.frames),
                                     self.atom_seq, key)

    def tests_object_settings(self, test: cst.BaseExpression, state: State, frame: Frame) -> bool:
        """Whether a test reads only one object's settings: an attribute tested for truth (an object
        flag, `assume_object_flags`) or an `object_condition`."""
        if isinstance(test, cst.Attribute) and isinstance(test.value, (cst.Name, cst.Attribute)):
            return object_atom_key(self.peek(test.value, state, frame), test.attr.value) is not None
        return self.object_condition(test, state, frame) is not None

    def object_condition(self, expr: cst.BaseExpression, state: State, frame: Frame) -> ObjectCondition | None:
        """A test whose every chain starts at an attribute of one object of the project that the
        program's own code set (`self.opt.gan_type == "vanilla"`, `self.args.lambda_z > 0`), with no
        call in it: its key as the object knows it, wherever it is tested from."""
        shape = _settings_shape(expr)
        if shape is None:
            return None
        key, root, firsts, equality = shape
        owner = self.lookup(root, state, frame)
        if owner is None or owner.kind is not Kind.INSTANCE or not isinstance(owner.ref, ClassInfo) or not owner.label:
            return None
        heap = frozenset((heap_owner(owner), first) for first in firsts)
        self.touch(*heap)
        assigned = self.assigned_attributes(owner.ref)
        if not all(k in state.hdefs or k[1] in assigned for k in heap):
            return None  # an attribute a library maintains (`self.training`) may change behind its back
        prefix = f"{_object_prefix(owner)}|"
        condition = ObjectCondition(prefix + key, heap, root, prefix, None if equality is None else
                                    (prefix + equality[0], equality[1], equality[2]))
        self.consult(condition.key, *([EQUALITY + condition.equality[0]] if condition.equality else []))
        return condition

    def persists(self, test: cst.BaseExpression, state: State, frame: Frame) -> bool:
        """Whether a test keeps its truth from one call of the object's methods to the next: a test of
        its settings (`object_condition`), or a flag of its own (`self.wgan_gp`) assumed as one, that
        the program never changes once tested."""
        expr, _ = strip_not(test)
        if isinstance(expr, cst.BooleanOperation):
            return self.persists(expr.left, state, frame) and self.persists(expr.right, state, frame)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
            owner = self.peek(expr.value, state, frame)
            key = object_atom_key(owner, expr.attr.value)
            if key is None or key not in state.assume:
                return False
            heap = state.assume[key].heap
        else:
            condition = self.object_condition(expr, state, frame)
            if condition is None or condition.key not in state.assume:
                return False
            heap = condition.heap
        return not heap & self.unsettled

    def assume_object_conditions(self, test: cst.BaseExpression, state: State, frame: Frame) -> None:
        """Before a test is decided: what earlier calls assumed of the same object's settings, as
        this frame names them (the test itself, and for `x == lit` every assumed `x == ...`)."""
        expr, _ = strip_not(test)
        if isinstance(expr, cst.BooleanOperation):
            self.assume_object_conditions(expr.left, state, frame)
            self.assume_object_conditions(expr.right, state, frame)
            return
        condition = self.object_condition(expr, state, frame)
        if condition is None:
            return
        wanted = [condition.key]
        if condition.equality is not None:
            wanted += [key for key, atom in state.assume.items() if key.startswith(condition.prefix)
                       and atom.equality is not None and atom.equality[0] == condition.equality[0]]
        for key in wanted:
            known = state.assume.get(key)
            if known is None:
                continue
            local = key[len(condition.prefix):].replace("@.", f"{condition.root}.")
            if local in state.assume:
                continue
            equality = None if known.equality is None else (
                known.equality[0][len(condition.prefix):].replace("@.", f"{condition.root}."),
                known.equality[1], known.equality[2])
            self.atom_seq += 1
            state.assume[local] = Atom(local, known.truth, frozenset({condition.root}), known.heap, len(state.frames),
                                       self.atom_seq, known.text, equality)

    def class_test(self, obj: cst.BaseExpression, cls: cst.BaseExpression, state: State,
                   frame: Frame) -> bool | None:
        """`isinstance(obj, Cls)` for a class `Cls` of the project: decided when `obj` is an object of
        a project class (its class or a base of it is `Cls`, or not) or a library module (never one)."""
        wanted = self.peek(cls, state, frame)
        if wanted is None and isinstance(cls, (cst.Name, cst.Attribute)):
            wanted = self.eval(cls, state, frame)
        owner = self.peek(obj, state, frame)
        if wanted is None or owner is None or wanted.kind is not Kind.CLASS or not isinstance(wanted.ref, ClassInfo):
            return None
        if owner.kind is Kind.MODULE and owner.ref is None and owner.qual is not None:
            return False
        if owner.kind is not Kind.INSTANCE or not isinstance(owner.ref, ClassInfo):
            return None
        decided = {any(c is wanted.ref for c in self.class_and_bases(member.ref)) for member in members(owner)}
        return decided.pop() if len(decided) == 1 else None

    def resolve_compound(self, expr: cst.BooleanOperation, holds: bool, state: State, frame: Frame) -> None:
        """`a and b` false with `a` true on the path: `b` is false; `a or b` true with `a` false: `b`
        is true (`per_context = masks is not None and replay` false, then `replay` true)."""
        both = isinstance(expr.operator, cst.And)
        if both == holds or expr in self.resolving:
            return  # (assuming a part meets the compounds that hold it, this one included)
        self.resolving.add(expr)
        try:
            for part, other in ((expr.left, expr.right), (expr.right, expr.left)):
                if self.decided_test(other, state, frame) is not both:
                    continue
                decided = self.decided_test(part, state, frame)
                if decided is None:
                    self.assume_test(part, not both, state, frame)
                elif decided is both:
                    state.dead = True  # the path contradicts itself: no run takes it
                    return
        finally:
            self.resolving.discard(expr)

    def test_reads(self, expr: cst.BaseExpression, state: State,
                   frame: Frame) -> tuple[set[str], set[tuple[str, str]]]:
        """The names and attribute chains a test reads, and the instance attributes among them."""
        deps: set[str] = set()
        heap: set[tuple[str, str]] = set()
        for chain in chains_of(expr):
            text = dotted(chain)
            if text is not None:
                deps.add(text)
            current = chain
            while isinstance(current, cst.Attribute):
                owner = self.peek(current.value, state, frame)
                if owner is not None and owner.kind is Kind.INSTANCE and isinstance(owner.ref, ClassInfo):
                    heap.add((heap_owner(owner), current.attr.value))
                current = current.value
        return deps, heap

    def assume_test(self, test: cst.BaseExpression, truth: bool, state: State, frame: Frame) -> None:
        """Record that `test` had this truth on the path to `state` (when it is a condition atom)."""
        expr, positive = strip_not(test)
        holds = positive == truth
        if isinstance(expr, cst.Name) and state.assume:
            flag = self.flag_of(expr.value, state)
            if flag is not None:
                # The test the flag was assigned from is the condition (`if flag and x:` split): its
                # atoms decide the flag (`decide`).
                self.assume_test(flag[0], holds == flag[1], state, frame)
                return
        if isinstance(expr, cst.BooleanOperation) and isinstance(expr.operator, cst.And) == holds:
            # `a and b` true: both hold; `a or b` false: neither does.
            self.assume_test(expr.left, holds, state, frame)
            self.assume_test(expr.right, holds, state, frame)
        key = key_of(expr)
        if key is None or key in ("True", "False", "None"):
            return
        self.consult(key)
        deps, heap = self.test_reads(expr, state, frame)
        self.atom_seq += 1
        state.assume[key] = Atom(key, holds, frozenset(deps), frozenset(heap), len(state.frames),
                                 self.atom_seq, self.code_of(expr), equality_of(expr))
        if isinstance(expr, cst.BooleanOperation) and isinstance(expr.operator, cst.And) != holds:
            for part in (expr.left, expr.right):
                for part_key in _compound_keys(strip_not(part)[0]):
                    self.compounds.setdefault(part_key, {})[expr] = None
            self.resolve_compound(expr, holds, state, frame)
        for lookup_key in _compound_keys(expr):
            for compound in self.compounds.get(lookup_key, ()):
                compound_key = key_of(compound)
                if compound is not expr and compound_key in state.assume and not state.dead:
                    self.resolve_compound(compound, state.assume[compound_key].truth, state, frame)
        condition = self.object_condition(expr, state, frame)
        if condition is not None and condition.key not in state.assume:
            # The same test of the same object's settings, in whichever of its methods
            # (`self.opt.gan_type == "vanilla"` in `backward_D`, again at the next call): it
            # outlives the call that tested it, until the program assigns what it reads.
            self.atom_seq += 1
            state.assume[condition.key] = Atom(condition.key, holds, frozenset(), condition.heap, 0,
                                               self.atom_seq, self.code_of(expr), condition.equality)
        if isinstance(expr, cst.Attribute):
            owner = self.peek(expr.value, state, frame)
            object_key = object_atom_key(owner, expr.attr.value)
            if object_key is not None:
                self.consult(object_key)
            # Only an attribute the program's own code set (`self.tune = args.tune`): one a library
            # maintains (`self.training`, which `model.train()` sets) may change behind its back.
            if object_key is not None:
                self.touch((heap_owner(owner), expr.attr.value))  # type: ignore[union-attr]
            if object_key is not None and object_key not in state.assume \
                    and ((heap_owner(owner), expr.attr.value) in state.hdefs  # type: ignore[union-attr]
                         or expr.attr.value in self.assigned_attributes(owner.ref)):  # type: ignore[union-attr]
                # The same flag of the same object, wherever it is tested from (`self.tune` in a
                # method, `agent.tune` in the loop): it outlives the call that tested it.
                assert owner is not None and isinstance(owner.ref, ClassInfo)
                self.atom_seq += 1
                state.assume[object_key] = Atom(object_key, holds, frozenset(),
                                                frozenset({(heap_owner(owner), expr.attr.value)}), 0,
                                                self.atom_seq, self.code_of(expr))

    def none_test(self, test: cst.BaseExpression, state: State, frame: Frame) -> bool | None:
        """`x is None` / `x is not None` decided by what `x` holds: None itself, or an object or a
        container nothing ever set to None (`cached = cache.get(net)` after the cache was filled).
        Not a tensor: an attribute such as `p.grad` may be None whatever the model says of it."""
        expr, positive = strip_not(test)
        if isinstance(expr, cst.BooleanOperation):
            # `t_eval is not None and interpolator is not None` with no interpolator passed.
            parts = (self.none_test(expr.left, state, frame), self.none_test(expr.right, state, frame))
            both = isinstance(expr.operator, cst.And)
            if both and (False in parts) or not both and (True in parts):
                return (not both) == positive
            if parts == (both, both):
                return both == positive
            return None
        if not (isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1):
            return None
        comparison = expr.comparisons[0]
        equal = isinstance(comparison.operator, (cst.Is, cst.Equal))
        if not isinstance(comparison.operator, (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual)):
            return None
        if isinstance(comparison.comparator, (cst.Name, cst.Attribute)) and isinstance(expr.left, cst.Call) \
                and len(expr.left.args) == 1 and not expr.left.args[0].keyword:
            # `type(interpolator) == str` of an interpolator that is None: NoneType is no class the
            # facts know (a library dispatching on the type of an optional argument).
            called = self.qualified(expr.left.func, state, frame)
            fact = lookup(called) if called is not None else None
            compared = self.qualified(comparison.comparator, state, frame)
            of = self.peek(expr.left.args[0].value, state, frame)
            if fact is not None and fact.type_of and compared is not None and lookup(compared) is not None \
                    and of is not None and of.kind is Kind.NONE and not of.nodes:
                return (not equal) == positive
            return None
        if not (isinstance(comparison.comparator, cst.Name) and comparison.comparator.value == "None"):
            return None
        value = self.peek(expr.left, state, frame)
        if value is None:
            return None
        if value.kind is Kind.NONE and not value.nodes:
            is_none = True
        elif value.kind in _NEVER_NONE and not value.maybe_none:
            is_none = False
        else:
            return None
        return (is_none == equal) == positive

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
        self.note_splits(outcomes)
        joined = State.join_all(outcomes)
        if joined is None:
            state.dead = True
            return
        self.adopt(state, joined)

    def note_splits(self, states: list[State], results: list[Value] | None = None) -> None:
        """Object atoms the joined paths disagree on (see `split_parts`). Not those of an object the
        finished call made and dropped (`forget_private_objects`): no later code tests it again."""
        if results is not None and any(a.heap and k.startswith(OBJECT_ATOM) for k, a in self.split_atoms.items()):
            # Noted in a call this one made, of an object this one made and dropped.
            live_states = [p for p in states if not p.dead]
            gone = set().union(*(reachable_owners(p, results, skip_top=True) for p in live_states)) \
                if live_states else set()
            for key in [k for k, a in self.split_atoms.items() if a.heap and k.startswith(OBJECT_ATOM)]:
                if not any(owner in gone or owner.startswith(OPAQUE) for owner, _ in self.split_atoms[key].heap):
                    del self.split_atoms[key]
        if len(states) < 2:
            return
        seen: dict[str, Atom] = {}
        for part in states:
            for key, atom in part.assume.items():
                if key.startswith((OBJECT_ATOM, ARM_ATOM)):
                    seen.setdefault(key, atom)
        live = [p for p in states if not p.dead]
        reachable: set[str] | None = None
        for key, atom in seen.items():
            if key in self.split_atoms or len({(p.assume[key].truth if key in p.assume else None)
                                               for p in live}) <= 1:
                continue
            if key.startswith(ARM_ATOM):
                # Only a branch with a backward (or an optimizer step) in an arm: the caller's paths
                # after it differ in what a later backward meets.
                if key not in self.freeing_arms:
                    continue
                atom = replace(atom, level=0)
            elif results is not None and atom.heap:
                if reachable is None:
                    reachable = set().union(*(reachable_owners(p, results, skip_top=True) for p in live))
                if not any(owner in reachable or owner.startswith(OPAQUE) for owner, _ in atom.heap):
                    continue
            self.split_atoms[key] = atom

    @staticmethod
    def adopt(state: State, other: State) -> None:
        """Make `state` (an object others hold) equal to `other`."""
        for slot in State.__slots__:
            setattr(state, slot, getattr(other, slot))

    def exec_for(self, statement: cst.For, state: State, frame: Frame) -> None:
        self.merge_into(state, self.for_parts(statement, state, frame))

    def for_parts(self, statement: cst.For, state: State, frame: Frame) -> list[State]:
        iterable = self.eval(statement.iter, state, frame)
        elements = known_objects(iterable)
        if elements is None and isinstance(statement.iter, (cst.List, cst.Tuple)) \
                and not any(isinstance(e, cst.StarredElement) for e in statement.iter.elements):
            # `for m in [net.lif1, net.lif2]:`: the display says which objects, in order.
            elements = known_objects(Value(Kind.TUPLE, elems=tuple(self.peek(e.value, state, frame) or UNKNOWN
                                                                   for e in statement.iter.elements)))
        if elements:
            return self.unrolled(statement, elements, state, frame)
        element = self.element_from(statement.iter, iterable, state, frame)
        if element.element:
            sites: dict[int, int] = {}
            for node in iterable.nodes:
                sites[node // GENERATIONS] = sites.get(node // GENERATIONS, 0) + 1
            self.item_sites[statement] = frozenset(site for site, count in sites.items() if count > 1)

        slots = self.counted_slots(statement, state, frame)

        def enter(s: State) -> bool:
            self.assign(statement.target, element, s, frame, statement, statement.iter)
            if slots:
                counter, before = slots
                binding = self.binding_of(counter, s, frame)
                top = s.frames[-1]
                for name, item in before.items():
                    held = top.get(name)
                    if binding is not None and held is not None and held.kind is Kind.LIST:
                        top[name] = replace(held, indexed=((counter, binding, item),))
            return True

        targets = _target_names(statement.target)
        since = self.atom_seq

        def carry(s: State) -> None:
            # The next iteration binds the target again: a condition over it becomes what the
            # previous iteration took (one iteration of history: the iterations after a freeing
            # branch and after the other branch stay apart, without tying later tests to it).
            _carry_atoms(s, lambda atom: any(dep.split(".", 1)[0] in targets for dep in atom.deps), since)

        return self.run_loop(statement, statement.body, enter, lambda s: True, state, frame, carry)

    def counted_slots(self, statement: cst.For, state: State,
                      frame: Frame) -> tuple[str, dict[str, Value]] | None:
        """A loop over a counter (`for i in range(n)`, `for i, x in enumerate(xs)`) whose body uses
        some local lists only at the counter (`losses[i] = ...`, `losses[i]`): the counter, and what
        an item of each list held before the loop, which is what its slot at the counter holds in
        each iteration until the iteration writes it (the earlier iterations wrote other slots).
        Only lists whose items carry no graph before the loop."""
        call = statement.iter
        if not isinstance(call, cst.Call):
            return None
        name = self.qualified(call.func, state, frame)
        fact = api.lookup(name) if name is not None else None
        if fact is None:
            return None
        target = statement.target
        if fact.counts and isinstance(target, cst.Name):
            counter = target.value
        elif fact.collects is Collects.ENUMERATE and isinstance(target, cst.Tuple) and target.elements \
                and isinstance(target.elements[0].value, cst.Name):
            counter = target.elements[0].value.value
        else:
            return None
        names = self.counter_slots.get(statement)
        if names is None:
            names = self.counter_slots[statement] = slots_of_counter(statement.body, counter)
        before: dict[str, Value] = {}
        top = state.frames[-1]
        for held_name in names:
            held = top.get(held_name)
            if held is None or held.kind is not Kind.LIST or held.nodes:
                continue
            before[held_name] = self.element_of(held)
        return (counter, before) if before else None

    def unrolled(self, statement: cst.For, elements: tuple[Value, ...], state: State,
                 frame: Frame) -> list[State]:
        """A loop over a few known objects (`for m in net.modules()`, `for net in (G, D)`): the
        body runs once for each, in order, so a method called on each reaches each one's own
        class."""
        heads = [state]
        exits: list[State] = []
        frame.loops.append(statement)
        try:
            for element in elements:
                produced: list[State] = []
                for head in heads:
                    current = head.copy()
                    self.assign(statement.target, element, current, frame, statement, statement.iter)
                    frame.breaks.append([])
                    frame.continues.append([])
                    try:
                        produced.extend(self.exec_parts(statement.body, current, frame, statement))
                    finally:
                        exits.extend(frame.breaks.pop())
                        produced.extend(frame.continues.pop())
                heads = self.regroup(produced)
                if not heads:
                    break
        finally:
            frame.loops.pop()
        if statement.orelse is not None:
            heads = [part for head in heads
                     for part in self.exec_parts(statement.orelse.body, head, frame, statement.orelse)]
        return self.regroup([*heads, *exits])

    def exec_while(self, statement: cst.While, state: State, frame: Frame) -> None:
        self.merge_into(state, self.while_parts(statement, state, frame))

    def while_parts(self, statement: cst.While, state: State, frame: Frame) -> list[State]:
        test = statement.test

        def truth(s: State) -> bool | None:
            constant = _constant_truth(test)
            return constant if constant is not None else self.decided_test(test, s, frame)

        def enter(s: State) -> bool:
            self.eval(test, s, frame)
            decided = truth(s)
            if decided is False or s.dead:
                return False
            if decided is None:
                self.assume_test(test, True, s, frame)
            return True

        def leave(s: State) -> bool:
            decided = truth(s)
            if decided is True:
                return False
            if decided is None:
                self.assume_test(test, False, s, frame)
            return True

        since = self.atom_seq
        return self.run_loop(statement, statement.body, enter, leave, state, frame,
                             lambda s: _carry_atoms(s, lambda atom: False, since, own_only=True))

    def run_loop(self, loop: cst.For | cst.While, body: cst.BaseSuite, enter: Callable[[State], bool],
                 leave: Callable[[State], bool], state: State, frame: Frame,
                 carry: Callable[[State], None] | None = None) -> list[State]:
        """Run a loop body to a fixed point; the states after the loop.

        The first iteration starts from the state before the loop; later iterations start from
        what earlier iterations left behind, never from the state before the loop, so a value the
        first iteration always replaces is not mistaken for one a later iteration still holds.
        Iterations ending under different branch conditions stay apart (`conditions.py`): a
        condition over names the loop does not assign is taken the same way in every iteration.
        """
        heads = [state.copy()]
        later: dict[frozenset[tuple[str, bool]], State] = {}
        exits: list[State] = []
        skipped: list[State] = []
        converged = False
        forgotten: set[str] = set()
        forgotten_before = 0
        frame.loops.append(loop)
        entry_epochs = dict(state.epochs)
        try:
            for passes in range(MAX_LOOP_PASSES):
                produced: list[State] = []
                for head in heads:
                    current = head.copy()
                    if not enter(current):
                        if not later and not current.dead:
                            skipped.append(current)
                        continue
                    frame.breaks.append([])
                    frame.continues.append([])
                    try:
                        produced.extend(self.exec_parts(body, current, frame, loop))
                    finally:
                        exits.extend(frame.breaks.pop())
                        produced.extend(frame.continues.pop())
                if carry is not None:
                    for part in produced:
                        carry(part)
                changed = False
                grew = False  # only new partitions, whose values the others already cover
                before_pass = list(later.values())
                dirty: set[frozenset[tuple[str, bool]]] = set()
                for part in self.regroup(produced, forgotten):
                    key = part.partition_key()
                    known = later.get(key)
                    if known is None:
                        later[key] = part
                        grew = True
                        dirty.add(key)
                        continue
                    merged = State.join_all([known, part])
                    assert merged is not None
                    if passes + 1 >= WIDEN_AFTER:
                        stable = _same_widened(merged, known, entry_epochs)
                    else:
                        stable = merged.same_as(known)
                    if not stable:
                        later[key] = merged
                        changed = True
                        dirty.add(key)
                overflowed = len(later) > MAX_PARTS or len(forgotten) > forgotten_before
                forgotten_before = len(forgotten)
                if overflowed:
                    later = {p.partition_key(): p for p in self.regroup(list(later.values()), forgotten)}
                    dirty = set(later)
                if (overflowed or (grew and not changed)) and passes + 1 >= WIDEN_AFTER and before_pass:
                    # Condition atoms can split the states into ever new partitions (regrouping
                    # forgets some and joins the rest anew each pass): once widened, the paths
                    # together holding nothing new is a fixed point too.
                    joined, previous = State.join_all(list(later.values())), State.join_all(before_pass)
                    changed = joined is None or previous is None or not _same_widened(joined, previous, entry_epochs)
                elif grew:
                    changed = True
                if not changed:
                    converged = True
                    break
                # A partition whose state this pass left as it was would only produce again what it
                # produced: the next pass runs from the partitions that are new or changed.
                heads = [part for key, part in later.items() if key in dirty] or list(later.values())
        finally:
            frame.loops.pop()
        if not converged and later:
            self.incomplete.append(("loop", loop, frame.function.qualname if frame.function else "<module>"))
        after: list[State] = []
        for part in later.values():
            leaving = part.copy()
            if leave(leaving):
                after.append(leaving)
        after.extend(skipped)
        if not later and not skipped and not exits:
            # No iteration ends normally and nothing leaves the loop: as before the loop.
            after.append(state.copy())
        orelse = getattr(loop, "orelse", None)
        if orelse is not None:
            finished: list[State] = []
            for part in after:
                finished.extend(self.exec_parts(orelse.body, part, frame, orelse))
            after = finished
        return self.regroup([*after, *exits])

    def exec_with(self, statement: cst.With, state: State, frame: Frame) -> None:
        self.merge_into(state, self.with_parts(statement, state, frame))

    def with_parts(self, statement: cst.With, state: State, frame: Frame) -> list[State]:
        previous = state.no_grad
        caching = 0
        for item in statement.items:
            manager = item.item
            effect = self.grad_mode_of(manager, state, frame)
            if effect is None:
                value = self.eval(manager, state, frame)
            else:
                value = UNKNOWN
                state.no_grad = effect
            func = manager.func if isinstance(manager, cst.Call) else manager
            name = self.qualified(func, state, frame)
            fact = api.lookup(name) if name is not None else None
            if fact is not None and fact.caches is Cache.BLOCK:
                caching += 1
                self.cached_blocks.append(set())
            if item.asname is not None:
                self.assign(item.asname.name, value, state, frame, statement, manager)
        try:
            parts = self.exec_parts(statement.body, state, frame, statement)
        finally:
            kept = set().union(*self.cached_blocks[len(self.cached_blocks) - caching:]) if caching else set()
            del self.cached_blocks[len(self.cached_blocks) - caching:]
        for part in parts:
            part.no_grad = previous
            for key in kept:  # what the block kept is computed again after it
                self.touch(key)
                part.heap.pop(key, None)  # type: ignore[call-overload]
        return parts

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
        self.merge_into(state, self.try_parts(statement, state, frame))

    def try_parts(self, statement: cst.Try, state: State, frame: Frame) -> list[State]:
        """A `try`: its body, handlers and `else` joined; its `finally` keeps its paths apart."""
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
        if state.dead:
            return []
        if statement.finalbody is not None:
            return self.exec_parts(statement.finalbody.body, state, frame, statement.finalbody)
        return [state]

    # -- definitions ---------------------------------------------------------------------

    def define_function(self, node: cst.FunctionDef, state: State, frame: Frame) -> None:
        info = self.functions.get(node)
        if info is None:
            outer = frame.function.qualname if frame.function else ""
            info = self.function_info(node, f"{outer}.{node.name.value}" if outer else node.name.value,
                                      frame.imports, nested=frame.function is not None, parent=frame.function)
            self.functions[node] = info
        captured: tuple[tuple[str, Value], ...] = ()
        if info.nested and len(state.frames) > 1:
            # What it can read of the functions around it, should it run after they returned.
            seen: dict[str, Value] = {}
            for outer_frame in state.frames[1:]:
                seen.update(outer_frame)
            captured = tuple(sorted((name, seen[name]) for name in self.summaries.mentioned(node) if name in seen))
        self.store_name(node.name.value, Value(Kind.FUNCTION, ref=info, captured=captured), state, frame, node)

    def function_info(self, node: cst.FunctionDef, qualname: str, imports: dict[str, str],
                      **fields: object) -> FunctionInfo:
        """A function of the program, with what its decorators' facts say about its calls."""
        names: list[tuple[cst.Decorator, str]] = []
        for decorator in node.decorators:
            expr = decorator.decorator
            func = expr.func if isinstance(expr, cst.Call) else expr
            name = qualify(func, imports)
            if name is None and isinstance(func, cst.Name) and func.value in api.builtin_names():
                name = func.value  # `@property`, `@classmethod`, `@staticmethod`
            if name is not None:
                names.append((decorator, canonical(name)))
        known = [(d, f) for d, f in ((d, api.lookup(n)) for d, n in names) if f is not None]
        found = [f for _, f in known]
        return FunctionInfo(node, qualname, no_grad=any(name in K.NO_GRAD for _, name in names),
                            memoised=tuple((d, f.uncached) for d, f in known if f.uncached is not None),
                            accessor=any(f.accessor for f in found),
                            kept=any(f.accessor and f.caches is Cache.ATTRIBUTES for f in found),
                            binds=next((f.binds for f in found if f.binds is not None), None),
                            **fields)  # type: ignore[arg-type]

    # -- calls of functions of this file ------------------------------------------------

    def call_function(self, info: FunctionInfo, args: list[tuple[cst.BaseExpression | None, Value]],
                      kwargs: dict[str, Value], state: State, frame: Frame,
                      self_value: Value | None, call: cst.CSTNode) -> Value:
        """Call a function of the program: inlined, or its memoised result when a caching decorator
        (`functools.lru_cache`) already holds one for arguments that hash by value (a tensor
        argument hashes by identity: each new tensor is a new entry)."""
        passed = [v for _, v in args] + list(kwargs.values())
        if isinstance(call, cst.Call) and self._left_to_its_entry(info, call, passed, frame):
            return UNKNOWN
        if not info.memoised or any(v.nodes or v.kind is Kind.TENSOR for v in passed):
            return self.inline_call(info, args, kwargs, state, frame, self_value, call)
        key = ("<memo>", info.qualname)
        self.touch(key)
        kept = state.heap.get(key)  # type: ignore[call-overload]
        if kept is not None and kept is not UNKNOWN:
            self.memoised.update((node, info) for node in kept.nodes)
            self.memo_calls.update((node, call) for node in kept.nodes)
            return kept
        result = self.inline_call(info, args, kwargs, state, frame, self_value, call)
        state.heap[key] = result  # type: ignore[index]
        return result

    def _left_to_its_entry(self, info: FunctionInfo, call: cst.Call, passed: list[Value], frame: Frame) -> bool:
        """A function of the linted file called by the module's own code for its effect
        (`main(args)` under `if __name__ == "__main__":`, its result unused), outside any loop, with
        nothing that carries a graph, is a model or optimizer, or is a literal its branches could
        test: its analysis as an entry point sees the same, so it is not run twice."""
        if call is not self._discarded or frame.function is not None or frame.depth or frame.loops or frame.module is not None:
            return False
        if info.module is not None or info.owner is not None or info.nested or info.memoised:
            return False
        if not any(info is top for top in self.top_functions):
            return False
        if any(_is_literal(arg.value) for arg in call.args):
            return False
        return not any(v.nodes or v.grad or v.kind in _OBJECT_KINDS for v in passed)

    def inline_call(self, info: FunctionInfo, args: list[tuple[cst.BaseExpression | None, Value]],
                    kwargs: dict[str, Value], state: State, frame: Frame,
                    self_value: Value | None, call: cst.CSTNode) -> Value:
        """Inline a call: run the function's body with the argument values bound to its parameters,
        or take the summary of an earlier run from the same inputs (`summaries.py`)."""
        if frame.depth >= self.max_depth or any(info is f for f in self.active):
            state.unfilled = frozenset()  # code not followed may backward
            return UNKNOWN
        if self.entry_owner is getattr(self, "module", None):
            self.module_called.add(id(info.node))
        site = (id(info.node), id(call), frame.depth, frame.module, tuple(map(id, frame.loops)),
                tuple(map(id, self.active)), self.arm_loops, len(self.cached_blocks))
        summary = self.summaries.find(site, args, kwargs, self_value, state, info.nested)
        if summary is not None:
            for recorder in self.recorders:
                recorder.absorb(summary.recorder)
            self.last_returns = []
            for key, atom in summary.splits.items():
                self.split_atoms.setdefault(key, atom)
            return self.summaries.replay(summary, state, self)
        started = self.summaries.begin(args, kwargs, self_value, state, info.nested)
        first_atom = self.atom_seq
        recorded = self._recorded()
        splits = dict(self.split_atoms)
        recorder = Recorder(depth=len(state.frames))
        entry_assume = dict(state.assume)
        for outer in self.recorders:
            outer.functions.add(info.node)
        recorder.functions.add(info.node)
        self.recorders.append(recorder)
        try:
            # What the run reads and assigns is noted in every recorder under way (`consult`).
            result = self._inline_call(info, args, kwargs, state, frame, self_value, call)
        finally:
            self.recorders.pop()
        if len(state.assume) < len(entry_assume) or state.assume.keys() != entry_assume.keys():
            restore_shadowed(state, entry_assume, recorder)
        if self.atom_seq != first_atom:
            forget_private_objects(state, first_atom, [result, *([self_value] if self_value is not None else [])])
        # A flag of an object the run's paths disagreed on is no record: the summary notes it again.
        if self._recorded() == recorded and all(self.split_atoms.get(key) is atom for key, atom in splits.items()):
            kept = self.summaries.keep(site, started, state, result, recorder)
            if kept is not None:
                kept.origins = self.origins_made(kept.ran, state)
                kept.splits = {key: atom for key, atom in self.split_atoms.items() if key not in splits}
        return result

    def _recorded(self) -> tuple[object, ...]:
        """How much the analysis has recorded for the statement running (a call that recorded
        something is run again, never summarised)."""
        return (self.frees, len(self.freeing_arms), len(self.incomplete),
                len(self.conflicts), len(self.accumulations), self.last_backward, len(self.backwarded),
                len(self.retains), len(self.framework_calls), len(self.optimizer_owners))

    def _inline_call(self, info: FunctionInfo, args: list[tuple[cst.BaseExpression | None, Value]],
                     kwargs: dict[str, Value], state: State, frame: Frame,
                     self_value: Value | None, call: cst.CSTNode) -> Value:
        node = info.node
        module = info.module if info.module is not None else (frame.module if info.nested else None)
        callee = Frame(info, self_value, list(frame.loops), frame.depth + 1,
                       imports=dict(module.imports if module is not None else self.imports),
                       conditions=list(frame.conditions), module=module, call_site=call,
                       local_call=(call, self.statement(frame)) if frame.module is None else frame.local_call)
        locals_: dict[str, Value] = {}
        if any(key.startswith(CAPTURED) for key in kwargs):
            locals_.update((key[len(CAPTURED):], v) for key, v in kwargs.items() if key.startswith(CAPTURED))
            kwargs = {key: v for key, v in kwargs.items() if not key.startswith(CAPTURED)}
            callee.captured = frozenset(locals_)
        params = node.params
        positional = [*params.posonly_params, *params.params]
        values = [v for _, v in args]
        for key, given in kwargs.items():
            if key.startswith("*") and not key.startswith("**") and given.elems is not None \
                    and given.kind in (Kind.TUPLE, Kind.LIST):
                # `loss_fn(*model(x1, x2))`: the items of a known sequence, position by position.
                values.extend(given.elems)
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
        for name, truth in _literal_flags(node, call, self_value is not None).items():
            # `backward=True` passed or left to its default: `if backward:` in the body is decided.
            self.consult(name)
            if name not in state.assume:
                self.atom_seq += 1
                state.assume[name] = Atom(name, truth, frozenset({name}), frozenset(), len(state.frames),
                                          self.atom_seq, name)
        previous_no_grad = state.no_grad
        if info.no_grad:
            state.no_grad = True
        self.active.append(info)
        try:
            if isinstance(node, cst.Lambda):
                # A lambda's body is one expression: what it stores (`feats.append(o)` in a hook)
                # is stored by the lambda itself.
                callee.statements.append((node, node))
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
        self.last_returns = list(zip(callee.returns, callee.return_values))
        # The receiver outlives the call (an object being built by its `__init__`, or one the caller holds).
        self.note_splits(callee.returns, [*callee.return_values, *([self_value] if self_value is not None else [])])
        final = State.join_all(callee.returns)
        if final is None:
            final = state.copy()
            final.dead = False
        final.frames.pop()
        final.defs.pop()
        if final.assume:
            # Conditions over the callee's locals mean nothing once it has returned.
            final.assume = {k: a for k, a in final.assume.items() if a.level <= len(final.frames)}
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
        instance = Value(Kind.INSTANCE, ref=info, label=label, alloc=self.allocation(call, frame))
        if info.is_module:
            # A module starts in training mode (`torch.nn.Module.__init__`).
            owner = heap_owner(instance)
            self.touch((f"{FLAG}{owner}", TRAINING))
            state.heap[(f"{FLAG}{owner}", TRAINING)] = TRUE_FLAG  # type: ignore[index]
        for method in info.methods.values():
            # A new object starts with empty caches (memos are kept per class, not per object).
            if method.memoised:
                self.touch(("<memo>", method.qualname), (heap_owner(instance), method.node.name.value))  # type: ignore[union-attr]
                state.heap.pop(("<memo>", method.qualname), None)  # type: ignore[call-overload]
                if method.kept:
                    state.heap.pop((heap_owner(instance), method.node.name.value), None)  # type: ignore[union-attr, call-overload]
        init = self.method_of(info, "__init__")
        if init is not None:
            self.call_function(init, args, kwargs, state, frame, instance, call)
        return instance

    def allocation(self, call: cst.CSTNode, frame: Frame) -> str | None:
        """Where an object made by `call` lives, when the statement assigns the call's result to one
        target (`self.policy_old = Model(...)` in a method of `PPO`: `PPO.policy_old`; `model = Net()`
        in `main`: `main.model`); None otherwise (every such object of the class is one)."""
        statement = self.statement(frame)
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return None
        small = statement.body[0]
        if isinstance(small, cst.Return) and small.value is call and frame.function is not None:
            # A factory's result (`return Trajectories(env, states, log_probs)`): one object per
            # function that makes it, not the one object of its class every other site writes.
            return f"{frame.function.qualname}()"
        if not isinstance(small, cst.Assign) or small.value is not call or len(small.targets) != 1:
            return None
        target = dotted(small.targets[0].target)
        if target is None:
            return None
        head, _, rest = target.partition(".")
        me = frame.self_value
        if rest and me is not None and frame.function is not None and frame.function.owner is not None \
                and head == _first_parameter(frame.function):
            return f"{frame.function.owner.name}.{rest}"
        return f"{frame.function.qualname if frame.function is not None else '<module>'}.{target}"

    def is_module_container(self, info: ClassInfo) -> bool:
        """Whether a class of the program is (derives from) a container of modules (`nn.Sequential`)."""
        seen: set[str] = set()
        pending = [info]
        while pending:
            current = pending.pop(0)
            if current.name in seen:
                continue
            seen.add(current.name)
            if any(base in K.ITERATED_MODULE_CONTAINERS for base in current.bases):
                return True
            pending.extend(c for c in self.classes.values() if c.named_by(current.bases))
        return False

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
            pending.extend(self.bases_of(current))
        return None

    def bases_of(self, info: ClassInfo) -> list[ClassInfo]:
        """The project classes a class derives from directly, in order."""
        found = [c for c in self.classes.values() if c.named_by(info.bases) and c is not info]
        if not found and self.project is not None:
            # A base imported from a package that re-exports it (`torch_frame.transforms.X`).
            for base in info.bases:
                value = self.project_value(base, info.module)
                if value is not None and value.kind is Kind.CLASS and isinstance(value.ref, ClassInfo) \
                        and value.ref is not info:
                    found.append(value.ref)
        return found

    def element_of(self, iterable: Value) -> Value:
        """The value of one element when iterating over `iterable`."""
        if iterable.kind is Kind.DATA:
            return iterable
        if iterable.label is not None and iterable.label.startswith("params:"):
            parameter = Value(Kind.TENSOR, iterable.nodes, iterable.top, iterable.grad or bool(iterable.nodes),
                              label=iterable.label, parameters_of=iterable.parameters_of)
            if iterable.item_shape is not None:
                # `for name, p in model.named_parameters():`
                return Value(Kind.TUPLE, parameter.nodes, parameter.top, parameter.grad,
                             elems=tuple(parameter if carries else UNKNOWN for carries in iterable.item_shape))
            return parameter
        if isinstance(iterable.ref, Value) and (iterable.ref.kind is Kind.INSTANCE or (
                iterable.kind is Kind.LIST and iterable.ref.kind in (Kind.TUPLE, Kind.OPTIMIZER, Kind.MODULE))):
            return iterable.ref
        if iterable.kind is Kind.MODULE and iterable.qual in K.ITERATED_MODULE_CONTAINERS or (
                iterable.kind is Kind.INSTANCE and isinstance(iterable.ref, ClassInfo)
                and self.is_module_container(iterable.ref)):
            # One of the modules a ModuleList / Sequential holds: which one is not known.
            return Value(Kind.MODULE)
        if iterable.elems is not None and iterable.elems:
            result: Value | None = None
            for element in iterable.elems:
                result = join(result, element)
            return result or UNKNOWN
        if iterable.nodes:
            # An item of a list of tensors is a tensor (which one is not known).
            kind = Kind.TENSOR if iterable.kind is Kind.LIST and iterable.items == "tensor" else Kind.UNKNOWN
            one = Value(kind, iterable.nodes, iterable.top, iterable.grad,
                        element=iterable.kind in (Kind.LIST, Kind.TUPLE, Kind.DICT))
            if iterable.item_shape is not None:
                # Tuples: a position no item ever held a graph at (the reward) holds none.
                return Value(Kind.TUPLE, one.nodes, one.top, one.grad, element=one.element,
                             elems=tuple(one if carries else UNKNOWN for carries in iterable.item_shape))
            return one
        if iterable.kind in (Kind.LIST, Kind.TUPLE, Kind.DICT):
            # A list of leaves that require grad (`[torch.randn(3, requires_grad=True) ...]`).
            return Value(Kind.TENSOR, grad=True) if iterable.grad else FRESH if iterable.items == "tensor" else UNKNOWN
        return cut(iterable) if iterable.kind is Kind.TENSOR else UNKNOWN

    def tick(self) -> None:
        """Count work; give up on an entry point that would take too long."""
        self.steps += 1
        if self.steps > self.step_limit:
            raise BudgetExceeded
        if self.steps % 512 == 0 and time.process_time() > self.deadline:
            raise TimeLimit


def _first_parameter(function: FunctionInfo) -> str | None:
    node = function.node
    params = [*node.params.posonly_params, *node.params.params]
    return params[0].name.value if params else None


# Kinds of values that are no list, tuple or dict.
_NEVER_CONTAINERS = frozenset({Kind.TENSOR, Kind.MODULE, Kind.OPTIMIZER, Kind.NONE})


def _compound_keys(expr: cst.BaseExpression) -> tuple[str, ...]:
    """The keys under which a part of an `and`/`or` is found again: its own, and for a comparison
    of a name with literals the name's (`x is None` decides `x is not None`)."""
    key = key_of(expr)
    equality = equality_of(expr)
    keys = () if key is None else (key,)
    return keys + (EQUALITY + equality[0],) if equality is not None else keys


def _carry_atoms(state: State, varies: Callable[[Atom], bool], since: int, own_only: bool = False) -> None:
    """At the end of an iteration, the conditions the next one decides anew (over what the loop binds
    again, `varies`, and the arms of branches taken in it, atoms made after `since`) become what the
    previous iteration took: one iteration of history keeps the iterations after a freeing branch
    and after the other apart, without tying later tests to it. The history of the iteration before
    goes (with `own_only`, only what this loop made of it: outer loops' stays; a loop of a called
    function never forgets its callers' history)."""
    level = len(state.frames)
    for key in [k for k, atom in state.assume.items()
                if k.startswith(_PREVIOUS) and (not own_only or atom.seq > since) and atom.level >= level]:
        del state.assume[key]
    for key, atom in list(state.assume.items()):
        arm = key.startswith(ARM_ATOM) and atom.seq > since
        if arm or varies(atom):
            del state.assume[key]
            state.assume[_PREVIOUS + key] = Atom(_PREVIOUS + key, atom.truth, frozenset(), frozenset(),
                                                 atom.level, atom.seq if arm else 0, atom.text)


def _constant_truth(test: cst.BaseExpression) -> bool | None:
    """`while True:` / `while 1:`: a test whose truth is written out."""
    if isinstance(test, cst.Name) and test.value in ("True", "False"):
        return test.value == "True"
    if isinstance(test, cst.Integer):
        return int(test.value, 0) != 0
    return None


def _same_widened(merged: State, known: State, before: dict[int, int]) -> bool:
    """Whether two states of a loop's back edge agree once the generations the loop keeps aging
    are folded together (the states themselves keep their generations: that is what tells this
    iteration's graph from the ones before the loop)."""
    sites = _advanced(merged, before) | _advanced(known, before)
    if merged.same_as(known):
        return True
    widened, reference = merged.copy(), known.copy()
    widened.widen(sites)
    reference.widen(sites)
    return widened.same_as(reference)


def _advanced(state: State, before: dict[int, int]) -> frozenset[int]:
    """The sites evaluated again since `before` (a loop's own sites)."""
    return frozenset(site for site, epoch in state.epochs.items() if epoch != before.get(site, 0))


def _assignment_targets(statement: cst.CSTNode) -> list[cst.BaseExpression]:
    """The names and attributes a statement assigns anywhere inside it (not inside the functions
    and classes it defines, whose names it does assign)."""
    found: list[cst.BaseExpression] = []

    class Targets(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            found.extend(t.target for t in node.targets)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            found.append(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            found.append(node.target)

        def visit_For(self, node: cst.For) -> None:
            found.append(node.target)

        def visit_AsName(self, node: cst.AsName) -> None:
            if isinstance(node.name, cst.BaseExpression):
                found.append(node.name)

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            found.append(node.target)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            found.append(node.name)
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            found.append(node.name)
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

    walk(statement, Targets())
    flat: list[cst.BaseExpression] = []
    for target in found:
        if isinstance(target, (cst.Tuple, cst.List)):
            flat.extend(cst.Name(name) for name in _target_names(target))
        elif isinstance(target, (cst.Name, cst.Attribute)):
            flat.append(target)
    return flat


def _target_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _target_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return []


def _literal_flags(function: cst.CSTNode, call: cst.CSTNode, method: bool) -> dict[str, bool]:
    """The parameters a call binds to a literal, passed or by default, with the literal's truth
    (`backward=True`; `activation=None` or `activation="lrelu"`, tested as `if activation:`)."""
    if not isinstance(function, cst.FunctionDef) or not isinstance(call, cst.Call):
        return {}
    params = [*function.params.posonly_params, *function.params.params]
    if method and params:
        params = params[1:]
    if any(arg.star for arg in call.args):
        return {}
    given: dict[str, cst.BaseExpression] = {}
    positional = [arg.value for arg in call.args if arg.keyword is None]
    for param, value in zip(params, positional):
        given[param.name.value] = value
    for arg in call.args:
        if arg.keyword is not None:
            given[arg.keyword.value] = arg.value
    flags: dict[str, bool] = {}
    for param in [*params, *function.params.kwonly_params]:
        name = param.name.value
        truth = _literal_truth(given.get(name, param.default))
        if truth is not None:
            flags[name] = truth
    return flags


def _literal_truth(expr: cst.BaseExpression | None) -> bool | None:
    """The truth of a literal constant (`True`, `None`, `"lrelu"`, `0.0`); None for anything else."""
    if isinstance(expr, cst.Name):
        return {"True": True, "False": False, "None": False}.get(expr.value)
    if isinstance(expr, (cst.SimpleString, cst.Integer, cst.Float)):
        try:
            return bool(ast.literal_eval(expr.value))
        except (ValueError, SyntaxError):
            return None
    return None


# What a call makes that a fix must never make again (`Interpreter.making`).
_MADE_OBJECTS = frozenset({Kind.MODULE, Kind.INSTANCE, Kind.OPTIMIZER, Kind.DATA})
# Values made by a display or a constructor, never by a read that may give None.
_NEVER_NONE = frozenset({Kind.LIST, Kind.TUPLE, Kind.DICT, Kind.INSTANCE, Kind.MODULE, Kind.OPTIMIZER, Kind.CLASS})
_OBJECT_KINDS = frozenset({Kind.MODULE, Kind.INSTANCE, Kind.OPTIMIZER, Kind.FUNCTION, Kind.CLASS, Kind.TENSOR,
                           Kind.LIST, Kind.DICT, Kind.TUPLE})


def _getter_test(function: cst.FunctionDef, receiver: cst.BaseExpression) -> cst.BaseExpression | None:
    """What a method that only returns a test of its object's attributes tests, written on
    `receiver`; None for any other method (one that calls, reads globals, or does more)."""
    params = function.params
    if not params.params or params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.kwonly_params:
        return None
    me = params.params[0].name.value
    body = [s for s in function.body.body if not (
        isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Expr)
        and isinstance(s.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))]
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return None
    returned = body[0].body[0]
    if not isinstance(returned, cst.Return) or returned.value is None or key_of(returned.value) is None:
        return None
    attrs = {id(node.attr) for node in nodes_of(returned.value, cst.Attribute)}
    names = {node.value for node in nodes_of(returned.value, cst.Name) if id(node) not in attrs}
    if not names <= {me, "True", "False", "None"} | K.PURE_CALLS:
        return None

    class Rewrite(cst.CSTTransformer):
        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:  # type: ignore[override]
            return receiver if original.value == me else updated

        def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
            return updated.with_changes(attr=original.attr)

    return returned.value.visit(Rewrite())  # type: ignore[return-value]


def _plain_separation(first: State, second: State) -> bool:
    """Whether only conditions over names tell two paths apart: not an object's settings or flags
    (their truth is carried into later calls of its methods) nor the arm a freeing branch took."""
    for key in first.assume.keys() | second.assume.keys():
        mine, theirs = first.assume.get(key), second.assume.get(key)
        if mine is not None and theirs is not None and mine.truth == theirs.truth:
            continue
        atom = mine or theirs
        assert atom is not None
        if atom.heap or key.startswith((OBJECT_ATOM, ARM_ATOM)):
            return False
    return True


# Keys of atoms over an attribute of one object, as the heap knows it: `OBJECT_ATOM` + class key,
# the object's label and the attribute. Kept at the module's level (a call's return keeps them),
# forgotten when the attribute is assigned.
OBJECT_ATOM = "<object>:"
# Keys of atoms naming the arm a branch took (`ARM_ATOM` + the branch's identity), see `arm_key`; a
# called function's are decided by the caller's statement being run once per arm (`split_parts`).
ARM_ATOM = "<arm>:"
# How many object flags one statement is run again for (2**n runs).
MAX_SPLIT_ATOMS = 1


@dataclass(frozen=True)
class ObjectCondition:
    """A test of one object's settings (`Interpreter.object_condition`): its key as the object
    knows it, the attributes it reads, the name the object has where it is tested, the key prefix
    of that object, and its equality with a literal, keyed the same way."""

    key: str
    heap: frozenset[tuple[str, str]]
    root: str
    prefix: str
    equality: Membership | None


@lru_cache(maxsize=1 << 16)
def _settings_shape(expr: cst.BaseExpression) -> tuple[str, str, frozenset[str], tuple[str, str, bool] | None] | None:
    """What a test of one object's settings is, by its syntax alone: its key and its equality with
    a literal with the object's name written `@`, that name, and the attributes of it the test reads
    first. None for a test of something else: one attribute tested for truth (an object flag,
    `assume_object_flags`), a test that calls, a test for None (whether something was made yet, a
    cache: it changes as the program runs), chains from several names."""
    key = key_of(expr)
    if key is None or isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) \
            or _has_call(expr) or _tests_none(expr):
        return None
    root: str | None = None
    firsts: set[str] = set()
    for chain in chains_of(expr):
        node, first = chain, None
        while isinstance(node, cst.Attribute):
            first, node = node, node.value
        if first is None or not isinstance(node, cst.Name) or root not in (None, node.value):
            return None
        root = node.value
        firsts.add(first.attr.value)
    if root is None:
        return None
    pattern = re.compile(rf"(?<![\w.]){re.escape(root)}\.")
    equality = equality_of(expr)
    return (pattern.sub("@.", key), root, frozenset(firsts),
            None if equality is None else (pattern.sub("@.", equality[0]), equality[1], equality[2]))


def _tests_none(expr: cst.BaseExpression) -> bool:
    return any(node.value == "None" for node in nodes_of(expr, cst.Name))


def _has_call(expr: cst.BaseExpression) -> bool:
    return next(nodes_of(expr, cst.Call), None) is not None


def object_atom_key(owner: Value | None, attribute: str) -> str | None:
    if owner is None or owner.kind is not Kind.INSTANCE or not isinstance(owner.ref, ClassInfo) or not owner.label:
        return None
    return f"{_object_prefix(owner)}.{attribute}"


def _object_prefix(owner: Value) -> str:
    """How a condition over one object's attributes names the object: by its class and name, and by
    where it was made (the layers a model builds at two places, `EqualLinear(d, activation="lrelu")`
    in its mapping network and `EqualLinear(d)` in each modulation, are other objects)."""
    assert isinstance(owner.ref, ClassInfo)
    made = f"@{owner.alloc}" if owner.alloc is not None else ""
    return f"{OBJECT_ATOM}{owner.ref.key}:{owner.label}{made}"


def _is_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    return isinstance(node, (cst.BaseNumber, cst.BaseString, cst.UnaryOperation))


def restore_shadowed(state: State, entry: dict[str, Atom], recorder: Recorder) -> None:
    """A call that binds a local of the same name as a variable its caller's conditions read
    (`i = 1` in a model's forward, `i % 100 == 0` tested in the training loop) forgets them while
    it runs (its own tests of `i` are not the caller's); once it returns they hold again, unless
    the call assigned something they read that its caller sees."""
    if state.dead:
        return
    for key, atom in entry.items():
        if key not in state.assume and atom.level <= len(state.frames) \
                and not any(invalidated(atom, *assignment) for assignment in recorder.assigned):
            state.assume[key] = atom


def forget_private_objects(state: State, first_atom: int, results: list[Value]) -> None:
    """Tests of the settings of an object a finished call made and kept to itself (a label loader an
    evaluation routine builds, asks `if self.name == ...` and drops) say nothing about any later path:
    the next call makes another one. Kept, they would tie every later call to the way this one went,
    and no run of the routine could stand for the next (`summaries.py`)."""
    fresh = [key for key, atom in state.assume.items() if atom.level == 0 and atom.seq > first_atom and atom.heap]
    if not fresh:
        return
    reachable = reachable_owners(state, results)
    for key in fresh:
        if not any(owner in reachable or owner.startswith(OPAQUE) for owner, _ in state.assume[key].heap):
            del state.assume[key]


def reachable_owners(state: State, results: list[Value], skip_top: bool = False) -> set[str]:
    """The heap owners of the project objects still reachable from the variables of `state` (but
    those of its innermost frame with `skip_top`: a call about to return), from `results`, and
    from the attributes of what is reachable."""
    by_owner: dict[str, list[Value]] = {}
    for key, value in state.heap.items():
        by_owner.setdefault(_owner_of(key), []).append(value)
    frames = state.frames[:-1] if skip_top else state.frames
    reachable: set[str] = set()
    pending: list[Value] = [*results, *(v for frame in frames for v in frame.values())]
    while pending:
        found: set[str] = set()
        for value in pending:
            _owners_in(value, found)
        pending = [v for owner in found - reachable for v in by_owner.get(owner, ())]
        reachable |= found
    return reachable


def _owner_of(key: HeapKey) -> str:
    owner = key[0]
    return owner[len(FLAG):] if owner.startswith(FLAG) else owner


def _owners_in(value: Value, found: set[str], depth: int = 0) -> None:
    """The heap owners of the project objects a value is or holds (its items, the object a bound
    method belongs to)."""
    if depth > 4:
        return
    if value.kind is Kind.INSTANCE and isinstance(value.ref, ClassInfo):
        found.add(heap_owner(value))
    for inner in (*(value.elems or ()), value.bound, value.parameters_of,
                  value.ref if isinstance(value.ref, Value) else None):
        if inner is not None:
            _owners_in(inner, found, depth + 1)
