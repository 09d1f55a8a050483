"""Deciding why a stale graph was reused, and gathering the source snippets the fix text needs.

The decision combines three kinds of evidence: the graph (distance of the carrier to the stale part,
whether the failing root itself is stale), the call records (same call site or two different ones, a
grad call, a library making the call) and the source (is the carrier assigned inside the loop, from
itself, appended to a list, memoised on a module).
"""

from __future__ import annotations

import ast
import types
from dataclasses import dataclass, replace
from typing import Any

from gradguard import causes as model
from gradguard.analysis.api import reference_nodes, weight_updates
from gradguard.analysis.api.optim import GROUP_PARAMS, PARAM_GROUPS
from gradguard.analysis.api.torch_tensor import CREATE_GRAPH, LEAF, RETAIN_GRAPH
from gradguard.runtime import source as src
from gradguard.runtime.carrier import Candidate, frame_local
from gradguard.runtime.context import Context
from gradguard.runtime.diagnosis import CallSite, Carrier, Cause
from gradguard.runtime.graph import children_of, grad_fn_of, node_name
from gradguard.runtime.records import CallRecord

GAN_WORDS = ("fake", "generated", "gen_", "x_gen", "g_out")


@dataclass
class Ranked:
    """A candidate carrier placed in the failing graph.

    `dist` is its distance to the stale part (0: it is a stale tensor), `same_op` whether its node has
    the op type of the stale node it reaches ("its own previous value"), `carried` whether the source
    assigns it from itself. `index` is -1 for a carried variable whose new value is off the graph.
    """

    candidate: Candidate
    index: int
    dist: int
    boundary: int
    same_op: bool
    is_root: bool
    carried: bool
    upstream: bool = False

    @property
    def strength(self) -> int:
        """0 for convincing evidence, 1 for some, 2 for a tensor that merely reaches the stale part."""
        if self.dist == 0 or (self.same_op and self.carried):
            return 0
        return 1 if self.same_op or self.carried else 2

    def key(self) -> tuple[Any, ...]:
        """Sort key: best candidate first."""
        c = self.candidate
        return (
            self.is_root,
            self.strength,
            not self.upstream,
            self.dist,
            c.depth,
            c.is_attribute,
            c.container is not None,
        )

    @property
    def convincing(self) -> bool:
        """True when no further search (object attributes) is needed."""
        return not self.is_root and self.strength == 0


def decide(
    context: Context,
    best: Ranked | None,
    carrier: Carrier | None,
    culprit: CallRecord | None,
    root_stale: bool,
    *,
    shared_root: bool = False,
) -> Cause:
    """The cause of the error, from the best carrier, the culprit call and the source.

    `best` is None when the carrier was read from the source of an earlier call or from a creation
    site rather than found in a live frame; then only the call sites decide. `shared_root` says the
    failing loss was built before the culprit ran (both losses from one forward).
    """
    failure = context.failure
    failing = failure.record
    if culprit is not None and culprit.is_grad:
        return Cause.GRAD_FREED
    if from_library(context) and culprit is not None and not _same_site(culprit, failing):
        return Cause.FRAMEWORK
    if root_stale:
        return Cause.REPEATED
    if shared_root and culprit is not None and not _same_site(culprit, failing):
        return Cause.SHARED_FORWARD
    if best is None:
        if carrier is None or culprit is None:
            return Cause.UNKNOWN
        return Cause.LOOP_CARRIED if _same_site(culprit, failing) else Cause.SHARED_FORWARD
    candidate = best.candidate
    if context.appends(candidate):
        return Cause.COLLECTED
    if best.is_root:
        return Cause.ACCUMULATED if accumulation(context, candidate) is not None else Cause.REPEATED
    if built_outside_loop(context, candidate):
        return Cause.OUTSIDE_LOOP
    if _same_site(culprit, failing):
        return Cause.LOOP_CARRIED
    if culprit is None:
        return Cause.LOOP_CARRIED if best.carried else Cause.UNKNOWN
    if best.dist == 0 and gan_step(context, candidate, culprit):
        return Cause.GAN_FAKE
    if best.carried and best.dist > 0:
        return Cause.LOOP_CARRIED
    return Cause.SHARED_FORWARD


def from_library(context: Context) -> bool:
    """True when a library (Lightning, accelerate...) made the failing call, not the user's code."""
    caller = context.failure.caller
    return caller is not None and not context.failure.classifier.is_user(caller.f_code)


def _same_site(a: CallRecord | None, b: CallRecord | None) -> bool:
    return a is not None and b is not None and a.site is not None and a.site == b.site


def accumulation(context: Context, candidate: Candidate) -> ast.stmt | None:
    """The `total += loss` statement that accumulates into the carrier, if any."""
    home = context.home(candidate)
    if home is None:
        return None
    source, scope = context.scope(home)
    if source is None:
        return None
    found = src.accumulations(scope, candidate.group)
    return found[0] if found else None


def built_outside_loop(context: Context, candidate: Candidate) -> bool:
    """True when the carrier is assigned outside the innermost loop that runs the failing code (before
    every loop, or once per iteration of an outer one: a rollout's log-probabilities, an epoch's
    prototypes), and never inside it."""
    if candidate.owner is not None and candidate.attribute is not None:
        found = context.class_assignments(candidate.owner, candidate.attribute)
        if not found:
            return False
        later = [a for method, a in found if method != "__init__"]
        if not later:
            return True
        source, _ = context.class_source(candidate.owner)
        return source is not None and all(_is_memo(source, a, candidate.attribute) for a in later)
    frame = context.home(candidate)
    if frame is None:
        return False
    source, scope = context.scope(frame)
    if source is None:
        return False
    found = src.assignments(scope, candidate.group)
    loops = source.loops_around(scope, frame.f_lineno or 0)
    if not found or not loops:
        return False
    inner = loops[0]
    return not [a for a in found if inner.lineno <= a.line <= (inner.end_lineno or inner.lineno)]


def _is_memo(source: src.SourceFile, assignment: src.Assignment, attribute: str) -> bool:
    """`if self.cache is None: self.cache = ...`: assigned under a test of the same attribute."""
    for parent in source.ancestors(assignment.statement):
        if isinstance(parent, ast.If) and attribute in {k.split(".", 1)[-1] for k in src.names_in(parent.test)}:
            return True
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
    return False


def gan_step(context: Context, candidate: Candidate, culprit: CallRecord) -> bool:
    """The carrier went through the same callable before and after the culprit call (`D(fake)` twice)."""
    if any(word in candidate.group.lower() for word in GAN_WORDS):
        return True
    frame = context.home(candidate)
    if frame is None or culprit.site is None or frame.f_code.co_filename != culprit.site.filename:
        return False
    source, scope = context.scope(frame)
    if source is None:
        return False
    start = min((a.line for a in src.assignments(scope, candidate.group)), default=0)
    before = src.call_passing(source, scope, candidate.group, start, culprit.site.line)
    after = src.call_passing(source, scope, candidate.group, culprit.site.line + 1, frame.f_lineno or 0)
    return before is not None and after is not None and src.unparse(before.func) == src.unparse(after.func)


def _spelling(context: Context, qualified: str) -> str:
    """How the user's code names a function of the project (`repackage_hidden` imported from
    `utils`, or `utils.repackage_hidden`); its last part when no frame of the program binds it."""
    def same(a: str, b: str) -> bool:  # `utils` is `pkg.utils` run from inside pkg
        return a == b or a.endswith("." + b) or b.endswith("." + a)

    module, _, function = qualified.rpartition(".")
    for frame in context.frames:
        for name, value in list(frame.f_globals.items()):
            if isinstance(value, types.ModuleType):
                if module and same(value.__name__, module) and callable(getattr(value, function, None)):
                    return f"{name}.{function}"
            elif callable(value) and same(f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '')}",
                                          qualified):
                return name
    return function


def fix_facts(
    context: Context,
    best: Ranked | None,
    carrier: Carrier | None,
    culprit: CallRecord | None,
    failing_site: CallSite | None,
    freed_site: CallSite | None,
) -> dict[str, Any]:
    """Source snippets the fix text needs: receivers of the two calls, the D-step call, etc."""
    facts: dict[str, Any] = {"carrier": carrier, "failing": failing_site, "freed": freed_site}
    candidate = best.candidate if best is not None else None
    if candidate is not None:
        facts["container"] = candidate.container
        facts["group"] = candidate.group
        if _holds_distribution(context, candidate):
            facts["shape"] = "distribution"
        else:
            items = _item_shape(context, candidate)
            if items == "tuple":
                facts["item_shape"] = "tuple"  # one (h, c) per layer: each detached as a tuple
            elif items == "nested":
                facts["container"] = "nested"
    helpers = context.failure.classifier.project.detaches
    if helpers:
        # The project's own detaching helper ([tool.gradguard.api] detaches), as the code reaches it.
        facts["detach_helper"] = _spelling(context, helpers[0])
    for key, site in (("failing_call", failing_site), ("freed_call", freed_site)):
        source = context.source(site.filename) if site is not None else None
        call = src.backward_call(source, site.line) if source is not None and site is not None else None
        if source is not None and call is not None:
            facts[key] = source.segment(call)
            facts[key + "_receiver"] = src.backward_receiver(source, call)
            facts[key + "_retain"] = src.with_keyword(source, call, RETAIN_GRAPH)
            facts[key + "_create"] = src.with_keyword(source, call, CREATE_GRAPH)
    if (
        freed_site is not None
        and failing_site is not None
        and (freed_site.filename, freed_site.function) == (failing_site.filename, failing_site.function)
        and freed_site.line < failing_site.line
    ):
        source = context.source(failing_site.filename)
        if source is not None:
            called = src.method_calls_between(source, freed_site.line, failing_site.line)
            facts["between_steps"] = any(update in name for name in called for update in weight_updates())
            if facts["between_steps"] and candidate is not None:
                facts["settled_input"] = _settled_input(context, candidate, source, freed_site.line, failing_site.line)
            if facts["between_steps"]:
                facts["shared_parameters"] = _shared_parameters(context, source, freed_site.line, failing_site.line)
            between = [source.line(row) for row in range(freed_site.line + 1, failing_site.line)]
            facts["grads_read_between"] = model.reads_grads(between)
            facts["guarded_apart"] = model.guarded_apart(src.branches_around(source, freed_site.line),
                                                         src.branches_around(source, failing_site.line))
    facts["same_call"] = _same_site(culprit, context.failure.record)
    if carrier is not None and carrier.source:
        facts["assignment_statement"] = carrier.source
    home = context.home(candidate) if candidate is not None else None
    if candidate is not None and home is not None:
        facts["outside_loop"] = built_outside_loop(context, candidate) or home is not candidate.frame
        if failing_site is not None:
            # Read by the options of values built outside the loop, and of graphs whose saved tensors a
            # write changed (a target network blended in place).
            facts["frozen_source"] = _frozen_source(context, candidate, failing_site)
        if facts["outside_loop"] and failing_site is not None:
            facts["reference_only"] = _reference_only(context, candidate)
        source, scope = context.scope(home)
        if source is not None:
            facts["written_in_place"] = _written_in_place(candidate, scope)
            found = src.accumulations(scope, candidate.group)
            if found:
                facts["accumulated_value"] = src.accumulated_value(source, found[0], candidate.group)
            if failing_site is not None and failing_site.filename == source.filename:
                tests, bound = src.conditions_within_loop(source, scope, failing_site.line)
                facts["periodic"] = bool(tests) and model.varies_per_iteration(tests, bound)
            if culprit is not None and culprit.site is not None:
                start = min((a.line for a in src.assignments(scope, candidate.group)), default=0)
                call = src.call_passing(source, scope, candidate.group, start, culprit.site.line)
                if call is not None:
                    facts["first_use_statement"] = source.line(call.lineno)
                    facts["first_use_call"] = source.segment(call)
                    facts["first_use_line"] = call.lineno
    if culprit is not None and culprit.is_grad and failing_site is not None:
        facts["grad_feeds_loss"] = _grad_feeds_loss(context, culprit, failing_site)
    return facts


def _written_in_place(candidate: Candidate, scope: ast.AST) -> bool:
    """The monitor's `Evidence.written_in_place`: the stale tensor was written in place from a graph
    (its version counter moved and it has a node) and the loop's code never rebinds what holds it (a
    memory bank's `index_copy_`, a running statistic's `mul_().add_()`, in a method of its owner)."""
    tensor = candidate.tensor
    if candidate.container is not None or getattr(tensor, "grad_fn", None) is None \
            or getattr(tensor, "_version", 0) < 1:
        return False
    return not src.assignments(scope, candidate.group)


def _settled_input(context: Context, candidate: Candidate, source: src.SourceFile, freed: int, failing: int) -> bool:
    """The monitor's `Evidence.settled_input`: every optimizer of the parameters behind the shared
    tensor steps between the two calls and none steps after the failing one, in its function (the
    optimizers named by those `step` calls, looked up in the failing frame)."""
    frame = context.failure.frame
    if frame is None or frame.f_code.co_filename != source.filename:
        return False
    leaves = _leaves_behind(candidate.tensor)
    scope = source.function_at(failing)
    between = stepped_in(frame, source, scope, freed, failing)
    after = stepped_in(frame, source, scope, failing, 1 << 30)
    if not leaves or between is None or after is None:
        return False
    updating = [o for o in (*between, *after) if updated_by(o) & leaves]
    covered = set().union(*(updated_by(o) for o in updating)) if updating else set()
    return bool(updating) and leaves <= covered and not any(updated_by(o) & leaves for o in after)


def _shared_parameters(context: Context, source: src.SourceFile, freed: int, failing: int) -> bool:
    """The monitor's `Evidence.shared_parameters`: an optimizer stepped between the two calls updates
    parameters that another optimizer the function steps updates too (each named by its `step` call,
    looked up in the failing frame)."""
    frame = context.failure.frame
    if frame is None or frame.f_code.co_filename != source.filename:
        return False
    scope = source.function_at(failing)
    between = stepped_in(frame, source, scope, freed, failing)
    every = stepped_in(frame, source, scope, 0, 1 << 30)
    if not between or every is None:
        return False
    others = [o for o in every if not any(o is b for b in between)]
    return any(updated_by(b) & updated_by(o) for b in between for o in others)


def _frozen_source(context: Context, candidate: Candidate, failing: CallSite) -> bool:
    """The monitor's `Evidence.frozen_source`: the optimizers stepped in the innermost loop around the
    failing call (named by its `step` calls, looked up in the failing frame) update none of the
    parameters behind the carrier (a teacher's)."""
    frame = context.failure.frame
    source = context.source(failing.filename)
    if frame is None or source is None or frame.f_code.co_filename != source.filename:
        return False
    scope = source.function_at(failing.line)
    loops = source.loops_around(scope, failing.line)
    if not loops:
        return False
    first, last = loops[0].lineno, loops[0].end_lineno or loops[0].lineno
    stepped = stepped_in(frame, source, scope, first - 1, last + 1)
    leaves = _leaves_behind(candidate.tensor)
    return bool(stepped) and bool(leaves) and not any(updated_by(o) & leaves for o in stepped)


def _reference_only(context: Context, candidate: Candidate, limit: int = 20_000) -> bool:
    """The monitor's `Evidence.reference_only`: in the failing graph, the nodes computed from the
    carrier alone meet the rest only at comparisons that take them as the reference: a loss's target
    input (`api.reference_nodes`), or one side of a difference or ratio whose other side is computed
    from parameters behind the carrier too (`exp(new_log_probs - old_log_probs)`)."""
    carrier = getattr(candidate.tensor, "grad_fn", None)
    if carrier is None:
        return False
    inputs: dict[int, list[Any]] = {}
    nodes: dict[int, Any] = {}
    finished: list[int] = []  # children before the nodes that use them
    stack: list[tuple[Any, bool]] = [(grad_fn_of(root), False) for root in context.failure.roots]
    while stack:
        node, done = stack.pop()
        if done:
            finished.append(id(node))
            continue
        if node is None or id(node) in nodes:
            continue
        if len(nodes) >= limit:
            return False
        nodes[id(node)] = node
        stack.append((node, True))
        if node is carrier:
            continue
        try:
            inputs[id(node)] = [child for child, _ in node.next_functions]
        except Exception:  # noqa: BLE001 - a foreign node type: no evidence
            return False
        stack.extend((child, False) for child in inputs[id(node)] if child is not None)
    # Computed from the carrier alone (with constants): every input is.
    pure = {id(carrier)}
    for key in finished:
        present = [child for child in inputs.get(key, ()) if child is not None]
        if present and all(id(child) in pure for child in present):
            pure.add(key)
    meetings = [key for key, children in inputs.items()
                if key not in pure and any(c is not None and id(c) in pure for c in children)]
    if not meetings:
        return False
    slots = reference_nodes()
    behind = _leaves_from(carrier)
    for key in meetings:
        slot = slots.get(node_name(nodes[key]))
        children = inputs[key]
        held = {i for i, c in enumerate(children) if c is not None and id(c) in pure}
        if slot is None or len(held) != 1 or (slot >= 0 and held != {slot}):
            return False
        if slot < 0:
            others = [c for c in children if c is not None and id(c) not in pure]
            if not others or not any(_leaves_from(other) & behind for other in others):
                return False
    return True


def _leaves_behind(tensor: Any, limit: int = 100_000) -> set[int]:
    """`id`s of the leaf tensors (parameters) a tensor's graph reaches, freed or not."""
    return _leaves_from(getattr(tensor, "grad_fn", None), limit)


def _leaves_from(root: Any, limit: int = 100_000) -> set[int]:
    """`id`s of the leaf tensors (parameters) the graph below an autograd node reaches."""
    found: set[int] = set()
    seen, stack = {id(root)}, [root]
    while stack and len(seen) <= limit:
        node = stack.pop()
        leaf = getattr(node, LEAF, None)
        if leaf is not None:
            found.add(id(leaf))
        for child in children_of(node):
            if id(child) not in seen:
                seen.add(id(child))
                stack.append(child)
    return found


def updated_by(optimizer: Any) -> set[int]:
    return {id(p) for group in getattr(optimizer, PARAM_GROUPS, ()) for p in group.get(GROUP_PARAMS, ())}


def stepped_in(frame: types.FrameType, source: src.SourceFile, scope: Any, first: int, last: int) -> list[Any] | None:
    """The optimizers whose update method is called on lines strictly between `first` and `last` of
    the function; None when one of them cannot be found in the frame."""
    found: list[Any] = []
    for node in ast.walk(scope):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and first < node.lineno < last \
                and node.func.attr in weight_updates():
            optimizer = _resolve(frame, node.func.value)
            if optimizer is None or not hasattr(optimizer, PARAM_GROUPS):
                return None
            found.append(optimizer)
    return found


def _resolve(frame: types.FrameType, expr: ast.expr) -> Any:
    """The object a name or attribute chain (`self.critic_opt`) denotes in a frame, or None."""
    if isinstance(expr, ast.Name):
        value = frame_local(frame, expr.id)
        return value if value is not None else frame.f_globals.get(expr.id)
    if isinstance(expr, ast.Attribute):
        owner = _resolve(frame, expr.value)
        try:
            return getattr(owner, expr.attr, None) if owner is not None else None
        except Exception:  # noqa: BLE001 - a property may raise: no evidence then
            return None
    return None


def _grad_feeds_loss(context: Context, culprit: CallRecord, failing: CallSite) -> bool:
    """True when the result of the culprit `grad` call flows into the failing call's tensor.

    Followed through assignments in the grad call's function, and into the failing call's function
    through the names it returns to; without that evidence a gradient used in a loss is assumed
    (the common case: gradient penalties, physics-informed losses, meta-learning).
    """
    assert culprit.site is not None
    source = context.source(culprit.site.filename)
    failing_source = context.source(failing.filename)
    if source is None or failing_source is None:
        return True
    scope = source.function_at(culprit.site.line)
    statement = source.statement_at(scope, culprit.site.line)
    targets: list[ast.AST] = []
    if isinstance(statement, ast.Assign):
        targets = list(statement.targets)
    elif isinstance(statement, ast.AnnAssign):
        targets = [statement.target]
    if not targets:
        return True
    call = src.backward_call(failing_source, failing.line)
    receiver = src.backward_receiver(failing_source, call) if call is not None else None
    if receiver is None:
        return True
    failing_scope = failing_source.function_at(failing.line)
    if scope is not failing_scope:
        # A helper's grad: its result feeds the loss when the helper goes on using it as a tensor
        # (returns a penalty built from it), not when it only turns it into a number or shows it.
        keys = {key for target in targets for key in src.names_in(target)}
        return src.used_as_tensor_after(scope, statement, keys)
    for target in targets:
        for key in src.names_in(target):
            if src.depends_on(scope, receiver, key):
                return True
    return False


def _holds_distribution(context: Context, candidate: Candidate) -> bool:
    """Whether the carrier's variable holds a torch.distributions object (rebuilt, never detached)."""
    distribution = getattr(getattr(context.torch, "distributions", None), "Distribution", None)
    frame = candidate.frame
    if not isinstance(distribution, type) or frame is None:
        return False
    return isinstance(frame_local(frame, candidate.group), distribution)


def _item_shape(context: Context, candidate: Candidate) -> str | None:
    """What the items of a list, tuple or dict carrier hold, when not all tensors: "tuple" (each a
    tuple of tensors, a per-layer `(h, c)`) or "nested" (deeper); `.detach()` on them would fail."""
    frame = candidate.frame
    value = frame_local(frame, candidate.group) if frame is not None else None
    is_tensor = context.torch.is_tensor
    items = list(value.values()) if isinstance(value, dict) else value
    if not isinstance(items, (list, tuple)) or all(is_tensor(item) for item in items):
        return None
    if all(isinstance(item, tuple) and all(is_tensor(t) for t in item) for item in items):
        return "tuple"
    return "nested"


def joint_carrier(context: Context, carrier: Carrier, failing: CallSite | None) -> Carrier:
    """The carrier with the other targets of its tuple assignment that the failing loss reads
    (`(mu, logvar)`), named by the rule lint's finding follows (`gradguard.causes.joint_carrier`)."""
    if failing is None or not carrier.source:
        return carrier
    statement = _statement(carrier.source)
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1 \
            or not isinstance(statement.targets[0], (ast.Tuple, ast.List)):
        return carrier
    targets = [t.id for t in statement.targets[0].elts if isinstance(t, ast.Name)]
    source = context.source(failing.filename)
    call = src.backward_call(source, failing.line) if source is not None else None
    receiver = src.backward_receiver(source, call) if source is not None and call is not None else None
    if source is None or receiver is None:
        return carrier
    scope = source.function_at(failing.line)
    loss = src.last_assignment(source, scope, receiver, failing.line)
    read = src.names_in(loss.value) if loss is not None else set()
    joint = model.joint_carrier(carrier.expression, targets, read)
    return carrier if joint == carrier.expression else replace(carrier, expression=joint)


def _statement(line: str) -> ast.AST | None:
    try:
        body = ast.parse(line.strip()).body
    except SyntaxError:
        return None
    return body[0] if len(body) == 1 else None
