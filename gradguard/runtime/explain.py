"""Turning a failed backward call into a `Diagnosis`: graph walk, carrier, culprit, cause.

Runs only after autograd raised, inside the monitor's error handler, under a time and node budget.
It holds graph nodes, tensors and frames only while it runs; the result is plain data.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from gradguard.runtime import source as src
from gradguard.runtime.carrier import Candidate, Scanner
from gradguard.runtime.diagnosis import (
    Carrier,
    CallSite,
    Cause,
    Diagnosis,
    ErrorKind,
    FixKind,
    choose_fix,
    explanation_for,
    rule_for,
)
from gradguard.runtime.inspect import (
    INF,
    Budget,
    GraphView,
    SavedProbe,
    contains_node,
    find_modified_save,
    node_name,
    node_seq,
    walk,
)
from gradguard.runtime.records import CallRecord, CodeClassifier

MAX_FRAMES = 8


@dataclass
class Failure:
    """What the monitor hands over when autograd raises: the call, its roots and its context."""

    message: str
    record: CallRecord
    roots: tuple[Any, ...]
    frame: FrameType | None
    records: tuple[CallRecord, ...]
    classifier: CodeClassifier
    held_roots: tuple[tuple[int, Any], ...] = ()
    budget: Budget = field(default_factory=Budget)


@dataclass
class _Ranked:
    candidate: Candidate
    index: int
    dist: int
    boundary: int
    same_op: bool
    is_root: bool
    carried: bool

    def key(self) -> tuple[Any, ...]:
        return (
            self.is_root,
            not (self.dist == 0 or self.same_op),
            not self.carried,
            self.dist,
            self.candidate.depth,
            self.candidate.is_attribute,
            self.candidate.container is not None,
        )

    @property
    def convincing(self) -> bool:
        return not self.is_root and (self.dist == 0 or self.same_op)


class _Context:
    """Shared per-diagnosis state: parsed sources, the torch module, the frames."""

    def __init__(self, failure: Failure) -> None:
        self.failure = failure
        self.torch: Any = sys.modules["torch"]
        self.sources: dict[str, src.SourceFile | None] = {}
        self.frames = list(failure.classifier.user_frames(failure.frame, MAX_FRAMES))

    def source(self, filename: str | None) -> src.SourceFile | None:
        return src.load(filename, self.sources) if filename else None

    def scope(self, frame: FrameType) -> tuple[src.SourceFile | None, Any]:
        source = self.source(frame.f_code.co_filename)
        return source, (source.scope_for(frame.f_code) if source else None)

    def call_site(self, record: CallRecord | None, frame: FrameType | None = None) -> CallSite | None:
        if record is None:
            return None
        if record.site is None:
            return None
        line = record.site.line
        if frame is not None and record is self.failure.record:
            line = frame.f_lineno or line
        source = self.source(record.site.filename)
        return CallSite(
            filename=record.site.filename,
            line=line,
            function=record.site.function,
            call_index=record.index,
            source=source.line(line) if source else "",
            retain_graph=record.retain_graph,
            api=record.api,
        )


def _grad_fn(value: Any) -> Any:
    node = getattr(value, "grad_fn", None)
    if node is None and isinstance(value, tuple) and len(value) == 2:
        node = value[0]
    return node


def _distributed(torch: Any) -> tuple[int | None, int | None]:
    if "torch.distributed" not in sys.modules:
        return None, None
    try:
        dist = torch.distributed
        if dist.is_available() and dist.is_initialized():
            return int(dist.get_rank()), int(dist.get_world_size())
    except Exception:  # noqa: BLE001 - a broken process group must not hide the diagnosis
        pass
    return None, None


def explain(failure: Failure, kind: ErrorKind) -> Diagnosis:
    """The diagnosis of one autograd error (raises on internal failure; the caller guards it)."""
    context = _Context(failure)
    if kind is ErrorKind.INPLACE_MODIFIED:
        return _explain_inplace(context)
    return _explain_double_backward(context)


# --------------------------------------------------------------------------------------------------
# "Trying to backward through the graph a second time"


def _earlier_freeing(failure: Failure) -> list[CallRecord]:
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


def _explain_double_backward(context: _Context) -> Diagnosis:
    failure = context.failure
    torch = context.torch
    earlier = _earlier_freeing(failure)
    threshold = max((max(r.root_seqs) for r in earlier), default=None)
    root_nodes = [_grad_fn(t) for t in failure.roots]
    probe = SavedProbe()
    view = walk(root_nodes, threshold, failure.budget, probe)

    scanner = Scanner(
        is_tensor=lambda v: isinstance(v, torch.Tensor),
        wanted=lambda t: t.grad_fn is not None,
        module_type=torch.nn.Module,
    )
    scanner.scan_frames(context.frames)
    ranked = _rank(context, scanner.candidates, view)
    if not ranked or not ranked[0].convincing:
        scanner.scan_objects()
        ranked = _rank(context, scanner.candidates, view)
    best = ranked[0] if ranked else None

    boundary = view.boundary()
    target = best.boundary if best is not None else (boundary[0] if boundary else None)
    freed_node = view.freed_node(target, failure.budget, probe) if target is not None else None
    node = node_name(freed_node) if freed_node is not None else (view.name(target) if target is not None else None)

    culprit, exact = _culprit(context, view, target, earlier, scanner.candidates)
    root_stale = target is not None and target in view.roots
    carrier = _carrier(context, best) if best is not None else None
    cause = _cause(context, view, best, carrier, culprit, root_stale)
    failing_site = context.call_site(failure.record, failure.frame)
    freed_site = context.call_site(culprit)
    fix = choose_fix(cause, _fix_facts(context, best, carrier, culprit, failing_site, freed_site))
    rank, world = _distributed(torch)
    created = _creation_site(view, target, freed_node)
    diagnosis = Diagnosis(
        error=ErrorKind.DOUBLE_BACKWARD,
        message=failure.message,
        failing_call=failing_site,
        freed_by=freed_site,
        node=node,
        carrier=carrier,
        fix=fix,
        rule=rule_for(cause),
        explanation="",
        cause=cause,
        freed_by_exact=exact,
        rank=rank,
        world_size=world,
        created_at=created,
    )
    return _with_explanation(diagnosis)


def _with_explanation(diagnosis: Diagnosis) -> Diagnosis:
    from dataclasses import replace

    return replace(diagnosis, explanation=explanation_for(diagnosis))


def _home(context: _Context, candidate: Candidate) -> FrameType | None:
    """The frame whose scope assigns the candidate's variable (the enclosing function for a closure)."""
    frame = candidate.frame
    if frame is None:
        return None
    base = candidate.group.split(".")[0].split("[")[0]
    if base in frame.f_code.co_freevars:
        for outer in context.frames:
            if base in outer.f_code.co_cellvars and outer.f_code.co_filename == frame.f_code.co_filename:
                return outer
    return frame


def _rank(context: _Context, candidates: list[Candidate], view: GraphView) -> list[_Ranked]:
    """Candidates that reach the stale part, best first.

    A carried variable whose current value is not in the failing graph (the new `hidden` after
    `out, hidden = rnn(x, hidden)`) still counts when its node has the same type as a stale node: its
    previous value is what brought the stale graph in.
    """
    boundary_by_name: dict[str, int] = {}
    for b in view.boundary():
        boundary_by_name.setdefault(view.name(b), b)
    ranked: list[_Ranked] = []
    for candidate in candidates:
        node = candidate.tensor.grad_fn
        i = view.index.get(node)
        if i is None or view.dist[i] >= INF:
            b = boundary_by_name.get(node_name(node))
            if b is not None and view.roots and _is_carried(context, candidate):
                ranked.append(_Ranked(candidate, -1, 0, b, True, False, True))
            continue
        boundary = view.reach[i]
        ranked.append(
            _Ranked(
                candidate=candidate,
                index=i,
                dist=view.dist[i],
                boundary=boundary,
                same_op=view.name(i) == view.name(boundary),
                is_root=i in view.roots,
                carried=_is_carried(context, candidate),
            )
        )
    ranked.sort(key=_Ranked.key)
    return ranked


def _is_carried(context: _Context, candidate: Candidate) -> bool:
    """True when the source assigns the carrier from its own previous value."""
    if candidate.owner is not None and candidate.attribute is not None:
        for _, assignment in _class_assignments(context, candidate.owner, candidate.attribute):
            if assignment.augmented or candidate.attribute in {
                k.split(".", 1)[-1] for k in src.names_in(assignment.value)
            }:
                return True
        if candidate.frame is not None and candidate.group.startswith("self."):
            source, scope = context.scope(candidate.frame)
            return bool(source and src.is_self_carried(source, scope, candidate.group))
        return False
    home = _home(context, candidate)
    if home is None:
        return False
    source, scope = context.scope(home)
    return bool(source and src.is_self_carried(source, scope, candidate.group))


def _class_of_source(context: _Context, owner: Any) -> tuple[src.SourceFile | None, str]:
    cls = type(owner)
    for klass in cls.__mro__:
        for value in vars(klass).values():
            code = getattr(value, "__code__", None)
            if code is not None and context.failure.classifier.is_user(code):
                return context.source(code.co_filename), klass.__name__
    return None, cls.__name__


def _class_assignments(context: _Context, owner: Any, attribute: str) -> list[tuple[str, src.Assignment]]:
    source, class_name = _class_of_source(context, owner)
    if source is None:
        return []
    return src.class_assignments(source, class_name, attribute)


def _carrier(context: _Context, ranked: _Ranked) -> Carrier:
    candidate = ranked.candidate
    aliases = tuple(a for a in candidate.aliases if a != candidate.group)
    if candidate.owner is not None and candidate.attribute is not None:
        source, class_name = _class_of_source(context, candidate.owner)
        found = _class_assignments(context, candidate.owner, candidate.attribute)
        if source is not None and found:
            methods = [item for item in found if item[0] != "__init__"] or found
            _, assignment = methods[-1]
            statement = assignment.statement
            receiver = src.expression_key(statement.targets[0]) if isinstance(statement, ast.Assign) else None
            prefix = (receiver or "self.").split(".")[0]
            return Carrier(
                expression=f"{prefix}.{candidate.attribute}",
                filename=source.filename,
                line=assignment.line,
                scope=class_name,
                source=source.line(assignment.line),
                aliases=(candidate.group, *aliases),
            )
    frame = _home(context, candidate)
    if frame is None:
        return Carrier(candidate.group, None, None, "<unknown>", aliases=aliases)
    source, scope = context.scope(frame)
    line: int | None = None
    text = ""
    if source is not None:
        assignment = src.last_assignment(source, scope, candidate.group, frame.f_lineno or 0)
        if assignment is not None:
            line = assignment.line
            text = source.line(line)
    function = frame.f_code.co_qualname
    return Carrier(
        expression=candidate.group,
        filename=frame.f_code.co_filename,
        line=line,
        scope="<module>" if function == "<module>" else function,
        source=text,
        aliases=aliases,
    )


def _culprit(
    context: _Context,
    view: GraphView,
    target: int | None,
    earlier: list[CallRecord],
    candidates: list[Candidate],
) -> tuple[CallRecord | None, bool]:
    """The earlier call that freed the stale node: exact when its root is still reachable."""
    if target is None or not earlier:
        return (earlier[-1] if earlier and target is None else None), False
    stale = view.nodes[target]
    budget = context.failure.budget
    by_index = {r.index: r for r in earlier}
    for index, root in reversed(context.failure.held_roots):
        record = by_index.get(index)
        if record is not None and contains_node(root, [stale], budget):
            return record, True
    by_seq: dict[int, CallRecord] = {}
    for record in earlier:
        for seq in record.root_seqs:
            by_seq.setdefault(seq, record)
    checked: set[int] = set()
    for candidate in candidates:
        root = candidate.tensor.grad_fn
        record = by_seq.get(node_seq(root))
        if record is None or record.index in checked:
            continue
        if contains_node(root, [stale], budget, limit=50_000):
            return record, True
    stale_seq = view.seq[target]
    for record in earlier:
        if max(record.root_seqs) >= stale_seq:
            return record, False
    return None, False


def _same_site(a: CallRecord | None, b: CallRecord | None) -> bool:
    return a is not None and b is not None and a.site is not None and a.site == b.site


def _cause(
    context: _Context,
    view: GraphView,
    best: _Ranked | None,
    carrier: Carrier | None,
    culprit: CallRecord | None,
    root_stale: bool,
) -> Cause:
    failing = context.failure.record
    if culprit is not None and culprit.is_grad:
        return Cause.GRAD_FREED
    if root_stale:
        return Cause.REPEATED
    if best is None:
        return Cause.UNKNOWN
    candidate = best.candidate
    if best.is_root:
        if _accumulation(context, candidate) is not None:
            return Cause.ACCUMULATED
        return Cause.REPEATED
    if _built_outside_loop(context, candidate):
        return Cause.OUTSIDE_LOOP
    if _same_site(culprit, failing):
        return Cause.LOOP_CARRIED
    if culprit is None:
        return Cause.LOOP_CARRIED if best.carried else Cause.UNKNOWN
    if best.dist == 0 and _gan_step(context, candidate, culprit):
        return Cause.GAN_FAKE
    if best.carried and best.dist > 0:
        return Cause.LOOP_CARRIED
    return Cause.SHARED_FORWARD


def _accumulation(context: _Context, candidate: Candidate) -> Any | None:
    home = _home(context, candidate)
    if home is None:
        return None
    source, scope = context.scope(home)
    if source is None:
        return None
    found = src.accumulations(scope, candidate.group)
    return found[0] if found else None


def _built_outside_loop(context: _Context, candidate: Candidate) -> bool:
    """True when the carrier is assigned once, before (outside) the loop that runs the failing code."""
    if candidate.owner is not None and candidate.attribute is not None:
        found = _class_assignments(context, candidate.owner, candidate.attribute)
        if found:
            if all(method == "__init__" for method, _ in found):
                return True
            source, _ = _class_of_source(context, candidate.owner)
            return source is not None and all(_is_memo(source, a, candidate.attribute) for _, a in found)
        return False
    frame = _home(context, candidate)
    if frame is None:
        return False
    source, scope = context.scope(frame)
    if source is None:
        return False
    found = src.assignments(scope, candidate.group)
    loops = source.loops_around(scope, frame.f_lineno or 0)
    if not found or not loops:
        return False
    outer = loops[-1]
    inside = [a for a in found if outer.lineno <= a.line <= (outer.end_lineno or outer.lineno)]
    return not inside


def _is_memo(source: src.SourceFile, assignment: src.Assignment, attribute: str) -> bool:
    """`if self.cache is None: self.cache = ...`: assigned under a test of the same attribute."""
    for parent in source.ancestors(assignment.statement):
        if isinstance(parent, ast.If):
            tested = {k.split(".", 1)[-1] for k in src.names_in(parent.test)}
            if attribute in tested:
                return True
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
    return False


def _gan_step(context: _Context, candidate: Candidate, culprit: CallRecord) -> bool:
    """The carrier went through the same callable before and after the culprit call (`D(fake)` twice)."""
    name = candidate.group.lower()
    if any(word in name for word in ("fake", "generated", "gen_", "x_gen", "g_out")):
        return True
    frame = _home(context, candidate)
    if frame is None or culprit.site is None or frame.f_code.co_filename != culprit.site.filename:
        return False
    source, scope = context.scope(frame)
    if source is None:
        return False
    start = min((a.line for a in src.assignments(scope, candidate.group)), default=0)
    before = src.call_passing(source, scope, candidate.group, start, culprit.site.line)
    after = src.call_passing(source, scope, candidate.group, culprit.site.line + 1, frame.f_lineno or 0)
    return before is not None and after is not None and src.unparse(before.func) == src.unparse(after.func)


def _fix_facts(
    context: _Context,
    best: _Ranked | None,
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
    for key, site in (("failing_call", failing_site), ("freed_call", freed_site)):
        if site is None:
            continue
        source = context.source(site.filename)
        call = src.backward_call(source, site.line) if source else None
        if source is not None and call is not None:
            facts[key] = src.segment_of(source, call)
            facts[key + "_receiver"] = src.backward_receiver(source, call)
            facts[key + "_retain"] = src.with_keyword(source, call, "retain_graph")
            facts[key + "_create"] = src.with_keyword(source, call, "create_graph")
            facts[key + "_statement"] = source.line(site.line)
    home = _home(context, candidate) if candidate is not None else None
    if candidate is not None and home is not None:
        facts["outside_loop"] = _built_outside_loop(context, candidate) or home is not candidate.frame
        source, scope = context.scope(home)
        if source is not None:
            accumulation = src.accumulations(scope, candidate.group)
            if accumulation:
                facts["accumulation"] = src.segment_of(source, accumulation[0])
                facts["accumulated_value"] = src.accumulated_value(source, accumulation[0], candidate.group)
            if culprit is not None and culprit.site is not None:
                start = min((a.line for a in src.assignments(scope, candidate.group)), default=0)
                call = src.call_passing(source, scope, candidate.group, start, culprit.site.line)
                if call is not None:
                    facts["first_use_statement"] = source.line(call.lineno)
                    facts["first_use_call"] = src.segment_of(source, call)
                    facts["first_use_line"] = call.lineno
            if carrier is not None and carrier.line is not None:
                facts["assignment_statement"] = carrier.source
        grad_source = context.source(culprit.site.filename) if culprit is not None and culprit.site else None
        if culprit is not None and culprit.is_grad and grad_source is not None and failing_site is not None:
            facts["grad_feeds_loss"] = _grad_feeds_loss(context, grad_source, culprit, failing_site)
    return facts


def _grad_feeds_loss(context: _Context, source: src.SourceFile, culprit: CallRecord, failing: CallSite) -> bool:
    """True when the result of the culprit `grad` call flows into the failing call's tensor."""
    assert culprit.site is not None
    for frame in context.frames:
        if frame.f_code.co_filename != culprit.site.filename:
            continue
        scope = source.scope_for(frame.f_code)
        statement = source.statement_at(scope, culprit.site.line)
        if not isinstance(statement, (ast.Assign, ast.AnnAssign)):
            continue
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        call = src.backward_call(source, failing.line)
        receiver = src.backward_receiver(source, call) if call is not None else None
        if receiver is None:
            return False
        for target in targets:
            for key in src.names_in(target):
                if src.depends_on(scope, receiver, key):
                    return True
    return False


def _creation_site(view: GraphView, target: int | None, freed: Any) -> str | None:
    """Where the stale node was created, when deep mode or anomaly mode recorded it."""
    if target is None:
        return None
    for node in (freed, view.nodes[target]):
        if node is None:
            continue
        try:
            metadata = node.metadata
        except Exception:  # noqa: BLE001
            continue
        site = metadata.get("gradguard_site")
        if site:
            filename, line, owner = site
            return f"{filename}:{line}" + (f" (output of {owner})" if owner else "")
        trace = metadata.get("traceback_")
        if trace:
            lines = [entry for entry in trace if "File " in entry]
            if lines:
                match = re.search(r'File "([^"]+)", line (\d+)', lines[-1])
                if match:
                    return f"{match.group(1)}:{match.group(2)} (from anomaly mode)"
    return None


# --------------------------------------------------------------------------------------------------
# "one of the variables needed for gradient computation has been modified by an inplace operation"

_INPLACE = re.compile(
    r"\[(?P<type>[^\s\]]+) \[(?P<shape>[^\]]*)\]\], which is (?P<what>.*?), is at version (?P<actual>\d+); "
    r"expected version (?P<expected>\d+)"
)

_INPLACE_OPS = {
    "CopySlices": "an indexed assignment (`x[...] = ...`)",
    "AddBackward0": "`add_` / `+=`",
    "SubBackward0": "`sub_` / `-=`",
    "MulBackward0": "`mul_` / `*=`",
    "DivBackward0": "`div_` / `/=`",
}


def _explain_inplace(context: _Context) -> Diagnosis:
    failure = context.failure
    torch = context.torch
    parsed = _INPLACE.search(failure.message)
    probe = SavedProbe()
    root_nodes = [_grad_fn(t) for t in failure.roots]
    modified = find_modified_save(root_nodes, failure.budget, probe)
    scanner = Scanner(
        is_tensor=lambda v: isinstance(v, torch.Tensor),
        wanted=lambda t: True,
        module_type=torch.nn.Module,
    )
    scanner.scan_frames(context.frames)
    scanner.scan_objects(parameters=True)
    match = _match_saved(scanner.candidates, modified.tensors if modified else (), parsed)
    carrier = None
    details: list[tuple[str, str]] = []
    if parsed:
        details.append(("value", f"{parsed['type']} of shape [{parsed['shape']}], {parsed['what']}"))
        details.append(("version", f"saved at version {parsed['expected']}, now at version {parsed['actual']}"))
    if modified is not None:
        details.append(("needed by", f"{node_name(modified.node)} (saved `{modified.slot}`)"))
    facts: dict[str, Any] = {"failing": context.call_site(failure.record, failure.frame)}
    if match is not None:
        is_parameter = isinstance(match.tensor, torch.nn.Parameter)
        carrier = (
            _carrier(context, _Ranked(match, -1, 0, -1, True, False, False))
            if match.frame is not None
            else None
        )
        op = _inplace_op(match, torch)
        if op:
            details.append(("in-place op", op))
        facts.update(_inplace_source(context, match, carrier))
        facts["parameter"] = is_parameter
        facts["group"] = match.group
    facts["carrier"] = carrier
    if "inplace_line" in facts:
        details.append(("modified at", f"line {facts['inplace_line']}: {facts['inplace_text']}"))
    rank, world = _distributed(torch)
    diagnosis = Diagnosis(
        error=ErrorKind.INPLACE_MODIFIED,
        message=failure.message,
        failing_call=facts["failing"],
        freed_by=None,
        node=node_name(modified.node) if modified is not None else None,
        carrier=carrier,
        fix=choose_fix(Cause.INPLACE, facts),
        rule=None,
        explanation="",
        cause=Cause.INPLACE,
        rank=rank,
        world_size=world,
        details=tuple(details),
    )
    return _with_explanation(diagnosis)


def _match_saved(candidates: list[Candidate], tensors: tuple[Any, ...], parsed: re.Match[str] | None) -> Candidate | None:
    best: tuple[int, Candidate] | None = None
    for candidate in candidates:
        for saved in tensors:
            score = _same_memory(candidate.tensor, saved)
            if score and (best is None or (score, -candidate.depth) > (best[0], -best[1].depth)):
                best = (score, candidate)
    if best is None and parsed is not None and not tensors:
        return None
    return best[1] if best else None


def _same_memory(a: Any, b: Any) -> int:
    if a is b:
        return 3
    try:
        if a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr():
            return 0
        if a.storage_offset() == b.storage_offset() and tuple(a.shape) == tuple(b.shape):
            return 2
        return 1
    except Exception:  # noqa: BLE001 - sparse or meta tensors have no storage to compare
        return 0


def _inplace_op(candidate: Candidate, torch: Any) -> str | None:
    tensor = candidate.tensor
    if isinstance(tensor, torch.nn.Parameter) or tensor.grad_fn is None:
        return "an in-place update of a leaf tensor (optimizer.step(), or an update under torch.no_grad())"
    name = node_name(tensor.grad_fn)
    if name in _INPLACE_OPS:
        return _INPLACE_OPS[name]
    base = re.sub(r"Backward\d*$", "", name)
    return f"`{base.lower()}_`" if base else None


def _inplace_source(context: _Context, candidate: Candidate, carrier: Carrier | None) -> dict[str, Any]:
    frame = _home(context, candidate)
    if frame is None or candidate.owner is not None:
        return {}
    source, scope = context.scope(frame)
    if source is None:
        return {}
    first = carrier.line if carrier is not None and carrier.line is not None else 0
    edits = src.inplace_edits(source, scope, candidate.group, first, frame.f_lineno or 0)
    if not edits:
        return {}
    edit = edits[-1]
    return {"inplace_line": edit.line, "inplace_text": edit.text, "out_of_place": edit.out_of_place}
