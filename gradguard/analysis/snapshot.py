"""Whether a value computed once, outside the loop that uses it, is a snapshot: something the loss
compares against (a loss's target, the old side of PPO's ratio) or the output of modules no optimizer
of the loop trains (a distillation teacher). Such a value is computed without a graph where it is made
(`causes.FixKind.NO_GRAD`); any other is computed again in the loop.

Both facts are read from what the interpreter recorded: the origins of the graph nodes (which module
calls and which parameters made them, and what each operation combined), the calls that compare
their arguments (`Evaluator.comparisons`), and the optimizers stepped between the two calls.
"""

from __future__ import annotations

import libcst as cst

from gradguard.analysis.autograd import Met, owns
from gradguard.analysis.program import Program
from gradguard.analysis.scopes import assigned_in
from gradguard.analysis.values import GENERATIONS


def untrained(program: Program, met: Met, stepped: frozenset[str]) -> bool:
    """Whether the stale graph was made only by calls of modules (and operations on parameters they
    hold) that none of the optimizers stepped between the two calls updates (`Carrier.untrained`).
    Each maker must be named by a variable of the code that runs the failing call (`teacher`,
    `self.teacher`): a label of another scope (`self.conv1` inside the model's own method, the `m` of
    a helper's loop) may be another name of the module the optimizer updates. An optimizer of
    unknown modules, none stepped, or a maker whose name is not known: no."""
    if not stepped or any(owner.startswith("?") for owner in stepped):
        return False
    visible = _visible_names(program, met.failing.function)
    made = False
    for node in met.stale:
        origin = program.origins.get(node)
        if origin is None:
            return False
        site = node // GENERATIONS
        for owners in (origin.owners, program.leaf_owners.get(site, frozenset())):
            if not owners:
                continue
            if "?" in owners or any(owns(name, owners) for name in stepped) \
                    or not any(label.split(".")[0] in visible for label in owners):
                return False
            made = True
        if not origin.parents and not origin.owners and site not in program.leaf_owners:
            return False  # a graph started by something the analysis did not see made
    return made


def _visible_names(program: Program, function: str) -> frozenset[str]:
    """The names the code of `function` (a qualified name, `<module>` for the top level) can read:
    its parameters and the names it assigns, and the module's own."""
    found: set[str] = set()
    for statement in program.module.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            found.add(statement.name.value)
        else:
            found |= {name.split(".")[0] for name in assigned_in(statement)}
    for info in program.functions.values():
        node = info.node
        if info.qualname == function and isinstance(node, cst.FunctionDef):
            params = node.params
            found |= {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
            found |= {name.split(".")[0] for name in assigned_in(node.body)}
    return frozenset(found)


def reference_only(program: Program, met: Met) -> bool | None:
    """Whether the failing loss reads the stale value only as a reference it compares against
    (`Carrier.reference`). Walking back from the loss, the nodes computed from the stale value alone
    (`old_log_probs[idx]`, `softmax(teacher_logits / T)`) meet the rest of the graph at some
    operations; each must be a loss that takes them as its target, or a difference or ratio whose other
    side is a fresh output of a module that made the stale value (`exp(new_log_probs - old_log_probs)`).
    None when each meets the rest at such an operation but on which side is not known for every one."""
    epochs = dict(met.epochs)
    parents: dict[int, frozenset[int]] = {}
    queue = [n for n in met.value.top if n not in met.stale]
    while queue and len(parents) < _WALK_LIMIT:
        node = queue.pop()
        if node in parents:
            continue
        origin = program.origins.get(node)
        parents[node] = origin.now(origin.parents, epochs) if origin is not None else frozenset()
        queue.extend(n for n in parents[node] if n not in parents and n not in met.stale)
    if queue:
        return False
    pure = _computed_from(parents, met.stale)
    # A node whose other parents are evaluations of expressions that also made nodes computed from
    # the stale value alone meets only other evaluations of it (paths joined, generations folded).
    folded = {n // GENERATIONS for n in pure}
    meetings = [n for n, above in parents.items() if n not in pure and above & pure
                and any(p not in pure and p // GENERATIONS not in folded for p in above)]
    if not meetings:
        return False
    made_by = _labels(program, met.stale)
    verdicts = {_compares_against(program, node, parents, pure, made_by) for node in meetings}
    return False if False in verdicts else None if None in verdicts else True


_WALK_LIMIT = 5000


def _computed_from(parents: dict[int, frozenset[int]], stale: frozenset[int]) -> set[int]:
    """The nodes computed from the stale nodes alone (with constants and data): every parent is one."""
    pure = set(stale)
    decided: set[int] = set(stale)
    for start in parents:
        stack = [(start, False)]
        while stack:
            node, done = stack.pop()
            if done:
                above = parents.get(node, frozenset())
                if above and above <= pure:
                    pure.add(node)
                continue
            if node in decided:
                continue
            decided.add(node)
            stack.append((node, True))
            stack.extend((n, False) for n in parents.get(node, ()) if n not in decided)
    return pure


def _labels(program: Program, nodes: frozenset[int] | set[int]) -> frozenset[str]:
    """The modules whose calls made some of `nodes`, as labelled from outside their methods when
    that is known (`policy`, not the `self.body` every module may have)."""
    owners = frozenset().union(*(program.origins[n].owners for n in nodes if n in program.origins))
    outside = frozenset(o for o in owners if o != "self" and not o.startswith("self."))
    return outside or owners


def _compares_against(program: Program, node: int, parents: dict[int, frozenset[int]], pure: set[int],
                      made_by: frozenset[str]) -> bool | None:
    """Whether the operation that made `node` compares what it gets from the stale value alone
    against the rest: as a loss's target, or as one side of a difference or ratio (`torch.sub`, `-`,
    `/`) whose other side is computed by a module that made the stale value. None when it is such an
    operation but the argument the stale value came in by is not known (paths joined here; only a
    few of their reads are kept)."""
    origin = program.origins.get(node)
    expr = origin.expr if origin is not None else None
    if origin is None or expr is None:
        return False
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Subtract, cst.Divide)):
        either, references = True, (expr.left, expr.right)
    elif expr in program.comparisons:
        either, references = program.comparisons[expr]
    else:
        return False
    above = parents[node]
    stale_side = {n for n in above if n in pure}
    places: dict[int, set[int]] = {n: set() for n in above}
    for n in above:
        made = program.origins.get(n)
        if made is not None and made.expr is not None:
            places[n].add(id(made.expr))
    for read in origin.reads:
        # By site: the reads kept are a few of the generations that paths joined here.
        sites = {n // GENERATIONS for n in read.top}
        for n in above:
            if n // GENERATIONS in sites:
                places[n].add(id(read.expr))
    sides = [_subtree(reference) for reference in references]

    def side_of(n: int) -> set[int]:
        return {i for i, inside in enumerate(sides) if places[n] & inside}

    stale_sides = set().union(*(side_of(n) for n in stale_side))
    if len(stale_sides) > 1:
        return False
    if not either:
        if stale_sides:
            return True
        # Read where the call reads another argument (its input), or where is not known.
        return False if any(places[n] & _subtree(expr) for n in stale_side) else None

    def made(nodes: list[int]) -> bool:
        return bool(nodes) and bool(made_by & _labels(program, _behind(nodes, parents, pure)))

    # Nodes of the stale side not computed from the stale value alone are other evaluations of its
    # expressions (paths joined, generations folded); what the other side gets must come from a
    # module that made the stale value.
    if stale_sides and made([n for n in above if n not in pure and side_of(n) and not side_of(n) & stale_sides]):
        return True
    return None if made([n for n in above if n not in pure]) else False


def _behind(nodes: list[int], parents: dict[int, frozenset[int]], pure: set[int]) -> set[int]:
    """`nodes` and every node behind them, not computed from the stale value."""
    found: set[int] = set()
    queue = list(nodes)
    while queue:
        node = queue.pop()
        if node in found or node in pure:
            continue
        found.add(node)
        queue.extend(parents.get(node, ()))
    return found


def _subtree(node: cst.CSTNode) -> set[int]:
    """The ids of a syntax node and of every node inside it."""
    found: set[int] = set()

    class Collector(cst.CSTVisitor):
        def on_visit(self, inner: cst.CSTNode) -> bool:
            found.add(id(inner))
            return True

    node.visit(Collector())
    return found
