"""Per-diagnosis context: the failure handed over by the monitor, parsed sources, frames, carriers.

Everything here lives only while one diagnosis is built.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from gradguard.runtime import source as src
from gradguard.runtime.carrier import Candidate
from gradguard.runtime.deep import SITE_KEY
from gradguard.runtime.diagnosis import CallSite, Carrier
from gradguard.runtime.graph import Budget
from gradguard.runtime.records import CallRecord, CodeClassifier

MAX_FRAMES = 8


@dataclass
class Failure:
    """What the monitor hands over when autograd raises: the call, its roots and its context.

    `frame` is the user frame that made the failing call; `caller` is the first frame outside torch
    and gradguard (a library such as Lightning when the framework called backward).
    """

    message: str
    record: CallRecord
    roots: tuple[Any, ...]
    frame: FrameType | None
    records: tuple[CallRecord, ...]
    classifier: CodeClassifier
    caller: FrameType | None = None
    held_roots: tuple[tuple[int, Any], ...] = ()
    budget: Budget = field(default_factory=Budget)


class Context:
    """Shared state of one diagnosis: parsed sources, the torch module, the user frames."""

    def __init__(self, failure: Failure) -> None:
        self.failure = failure
        self.torch: Any = sys.modules["torch"]
        self.sources: dict[str, src.SourceFile | None] = {}
        self.frames = list(failure.classifier.user_frames(failure.frame, MAX_FRAMES))

    def source(self, filename: str | None) -> src.SourceFile | None:
        """The parsed file, or None when it cannot be read."""
        return src.load(filename, self.sources) if filename else None

    def scope(self, frame: FrameType) -> tuple[src.SourceFile | None, Any]:
        """The parsed file of `frame` and the AST of the function it runs."""
        source = self.source(frame.f_code.co_filename)
        return source, (source.scope_for(frame.f_code) if source else None)

    def call_site(self, record: CallRecord | None) -> CallSite | None:
        """A record's call site with its source line; the failing call uses its live frame's line."""
        if record is None or record.site is None:
            return None
        line = record.site.line
        failure = self.failure
        if record is failure.record and failure.frame is not None and failure.frame.f_lineno:
            line = failure.frame.f_lineno
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

    def home(self, candidate: Candidate) -> FrameType | None:
        """The frame whose scope assigns the candidate's variable (the enclosing one for a closure)."""
        frame = candidate.frame
        if frame is None:
            return None
        base = candidate.group.split(".")[0].split("[")[0]
        if base in frame.f_code.co_freevars:
            for outer in self.frames:
                if base in outer.f_code.co_cellvars and outer.f_code.co_filename == frame.f_code.co_filename:
                    return outer
        return frame

    def class_source(self, owner: Any) -> tuple[src.SourceFile | None, str]:
        """The parsed file defining the user class of `owner`, and that class's name."""
        for klass in type(owner).__mro__:
            for value in vars(klass).values():
                code = getattr(value, "__code__", None)
                if code is not None and self.failure.classifier.is_user(code):
                    return self.source(code.co_filename), klass.__name__
        return None, type(owner).__name__

    def class_assignments(self, owner: Any, attribute: str) -> list[tuple[str, src.Assignment]]:
        """`self.<attribute> = ...` statements in the methods of the owner's class."""
        source, class_name = self.class_source(owner)
        if source is None:
            return []
        return src.class_assignments(source, class_name, attribute)

    def appends(self, candidate: Candidate) -> list[tuple[src.SourceFile, ast.Call]]:
        """Calls that add to the candidate's container (`x.append(t)`), in the files involved."""
        if candidate.container not in ("list", "dict"):
            return []
        files = {frame.f_code.co_filename for frame in self.frames}
        if candidate.owner is not None:
            source, _ = self.class_source(candidate.owner)
            if source is not None:
                files.add(source.filename)
        suffix = f".{candidate.attribute}" if candidate.attribute else None
        found: list[tuple[src.SourceFile, ast.Call]] = []
        for filename in sorted(files):
            source = self.source(filename)
            if source is None:
                continue
            for call in src.container_additions(source):
                key = src.expression_key(call.func.value)  # type: ignore[attr-defined]
                if key == candidate.group or (suffix and key and key.endswith(suffix)):
                    found.append((source, call))
        return found

    def is_carried(self, candidate: Candidate) -> bool:
        """True when the source assigns the carrier from its own previous value (`h = cell(x, h)`)."""
        if candidate.owner is not None and candidate.attribute is not None:
            for _, assignment in self.class_assignments(candidate.owner, candidate.attribute):
                read = {k.split(".", 1)[-1] for k in src.names_in(assignment.value)}
                if assignment.augmented or candidate.attribute in read:
                    return True
        home = self.home(candidate)
        if home is None:
            return False
        source, scope = self.scope(home)
        return bool(source and src.is_self_carried(source, scope, candidate.group))

    def carrier(self, candidate: Candidate) -> Carrier:
        """The report's carrier for a candidate: expression, last assignment and scope."""
        aliases = tuple(a for a in candidate.aliases if a != candidate.group)
        appended = self.appends(candidate)
        if appended:
            source, call = appended[-1]
            scope = source.enclosing_function(call.lineno)
            return Carrier(
                expression=candidate.group,
                filename=source.filename,
                line=call.lineno,
                scope=scope,
                source=source.line(call.lineno),
                aliases=aliases,
            )
        if candidate.owner is not None and candidate.attribute is not None:
            source, class_name = self.class_source(candidate.owner)
            found = self.class_assignments(candidate.owner, candidate.attribute)
            if source is not None and found:
                _, assignment = ([item for item in found if item[0] != "__init__"] or found)[-1]
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
        frame = self.home(candidate)
        if frame is None:
            return Carrier(candidate.group, None, None, "<unknown>", aliases=aliases)
        source, scope = self.scope(frame)
        line: int | None = None
        text = ""
        if source is not None:
            assignment = src.last_assignment(source, scope, candidate.group, frame.f_lineno or 0)
            if assignment is not None:
                line = assignment.line
                text = source.line(line)
        return Carrier(
            expression=candidate.group,
            filename=frame.f_code.co_filename,
            line=line,
            scope=frame.f_code.co_qualname,
            source=text,
            aliases=aliases,
        )

    def receiver_carrier(self, record: CallRecord) -> Carrier | None:
        """The tensor an earlier call differentiated (`u` in `grad(u, t)`), read from its source line.

        Used when that call's root is itself the stale node and no live variable holds it any more
        (the function that computed it has returned).
        """
        if record.site is None:
            return None
        source = self.source(record.site.filename)
        call = src.backward_call(source, record.site.line) if source else None
        if source is None or call is None:
            return None
        receiver = src.backward_receiver(source, call)
        if not receiver or src.expression_key(src.parse_expression(receiver)) is None:
            return None
        scope = source.function_at(record.site.line)
        assignment = src.last_assignment(source, scope, receiver, record.site.line)
        return Carrier(
            expression=receiver,
            filename=source.filename,
            line=assignment.line if assignment else None,
            scope=record.site.function,
            source=source.line(assignment.line) if assignment else "",
        )

    def created_carrier(self, *nodes: Any) -> Carrier | None:
        """The variable a stale node was assigned to, from deep mode's creation-site stamp.

        Deep mode stamps `(file, line, module)` on module outputs; when that line assigns a plain name
        (`mid = self.stem(x)` in a forward that has returned), that name is the carrier.
        """
        for node in nodes:
            try:
                site = node.metadata.get(SITE_KEY) if node is not None else None
            except Exception:  # noqa: BLE001 - foreign node types have no metadata
                site = None
            if not site:
                continue
            filename, line, _ = site
            source = self.source(filename)
            if source is None:
                continue
            scope = source.function_at(line)
            statement = source.statement_at(scope, line)
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                name = src.expression_key(statement.targets[0])
                if name:
                    return Carrier(
                        expression=name,
                        filename=filename,
                        line=statement.lineno,
                        scope=source.enclosing_function(line),
                        source=source.line(statement.lineno),
                    )
        return None
