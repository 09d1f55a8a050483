"""`gradguard explain [LOG]`: a post-mortem from a pasted traceback or CI log, without running anything.

The log may hold noise around the traceback: CI timestamps, ANSI colours, `[rank0]:` prefixes of several
DDP ranks interleaved line by line. Lines are grouped by their rank prefix, the tracebacks in each group
are parsed, and the one that raised the double-backward or the in-place error is kept. Its frames in
local source (a path that exists here, or its tail under the current folder when the log comes from a
CI machine) are the user's; their files are linted, and the finding at or nearest the innermost user
frame's line is the diagnosis. What the static analysis says is marked as inferred: nothing was run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gradguard.model import Diagnostic

DOUBLE_BACKWARD = "Trying to backward through the graph a second time"
INPLACE = "modified by an inplace operation"

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_TIMESTAMP = re.compile(r"^\s*\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?\s?")
# `[rank0]:` (torch.distributed), `[default0]:` (torchrun --tee), `rank 0:`.
_RANK = re.compile(r"^\s*\[?(?:default|rank)\s*(?P<rank>\d+)\]?\s*:\s?", re.IGNORECASE)
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?$')
_ERROR = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Warning)): ?(?P<message>.*)$")
_LOCAL_SKIP = ("site-packages", "dist-packages", "<frozen", "<string>", "/lib/python3")


@dataclass(frozen=True)
class Frame:
    """One `File "...", line N, in func` entry of a traceback, with its local file when there is one."""

    path: str
    line: int
    function: str
    local: str | None


@dataclass
class Traceback:
    """One parsed traceback: its frames (outermost first) and the exception that ended it."""

    frames: list[Frame] = field(default_factory=list)
    error_type: str = ""
    message: str = ""
    rank: str | None = None

    @property
    def kind(self) -> str | None:
        """"double-backward", "inplace" or None for another error."""
        if DOUBLE_BACKWARD in self.message:
            return "double-backward"
        if INPLACE in self.message:
            return "inplace"
        return None

    @property
    def user_frames(self) -> list[Frame]:
        """The frames in local source, outermost first."""
        return [frame for frame in self.frames if frame.local is not None]


def clean_line(line: str) -> tuple[str | None, str]:
    """A log line without colours and timestamps, split into (rank, text)."""
    text = _ANSI.sub("", line.rstrip("\r\n"))
    for _ in range(3):  # prefixes come in either order: a timestamp, then a rank, or the reverse
        text = _TIMESTAMP.sub("", text, count=1)
        match = _RANK.match(text)
        if match is None:
            continue
        return match["rank"], _TIMESTAMP.sub("", text[match.end() :], count=1)
    return None, text


def local_file(path: str, cwd: Path) -> str | None:
    """The local source file a traceback's path names: as it is, or its tail under `cwd` (a CI path)."""
    if any(part in path for part in _LOCAL_SKIP):
        return None
    candidate = Path(path) if os.path.isabs(path) else cwd / path
    if candidate.is_file():
        return str(candidate)
    parts = Path(path).parts
    for start in range(1, len(parts)):
        tail = cwd.joinpath(*parts[start:])
        if tail.is_file():
            return str(tail)
    return None


def parse_log(text: str, cwd: Path) -> list[Traceback]:
    """Every traceback in a log, per rank, in the order they end."""
    streams: dict[str | None, list[str]] = {}
    for raw in text.splitlines():
        rank, line = clean_line(raw)
        streams.setdefault(rank, []).append(line)
    found: list[Traceback] = []
    for rank, lines in streams.items():
        found.extend(_tracebacks(lines, rank, cwd))
    return found


def _tracebacks(lines: Iterable[str], rank: str | None, cwd: Path) -> Iterable[Traceback]:
    current: Traceback | None = None
    for line in lines:
        if line.strip().startswith("Traceback (most recent call last):"):
            current = Traceback(rank=rank)
            continue
        if current is None:
            continue
        frame = _FRAME.match(line)
        if frame is not None:
            path = frame["path"]
            current.frames.append(Frame(path, int(frame["line"]), (frame["func"] or "").strip(), local_file(path, cwd)))
            continue
        error = _ERROR.match(line.strip())
        if error is not None and not line.startswith((" ", "\t")):
            current.error_type, current.message = error["type"], error["message"]
            yield current
            current = None


def pick(tracebacks: list[Traceback]) -> Traceback | None:
    """The traceback to explain: the first with an autograd error and a user frame."""
    for wanted in ("double-backward", "inplace"):
        for traceback in tracebacks:
            if traceback.kind == wanted and traceback.user_frames:
                return traceback
    for traceback in tracebacks:
        if traceback.kind is not None:
            return traceback
    return None


@dataclass
class Diagnosis:
    """What gradguard can say about one traceback: the failing frame and the static finding, if any."""

    traceback: Traceback
    frame: Frame | None
    finding: Diagnostic | None = None
    finding_path: str | None = None
    source: str | None = None
    match: str = ""  # how the finding was tied to the traceback


def diagnose(traceback: Traceback, cwd: Path) -> Diagnosis:
    """Lint the files of the user's frames and tie a finding to the failing call."""
    from gradguard.config import Resolver
    from gradguard.engine import check_path

    frames = traceback.user_frames
    if not frames:
        return Diagnosis(traceback, None)
    innermost = frames[-1]
    resolver = Resolver(cwd)
    results = {}
    for frame in reversed(frames):
        if frame.local is not None and frame.local not in results:
            results[frame.local] = check_path(frame.local, resolver.for_file(frame.local))

    def found(path: str) -> list[Diagnostic]:
        return [d for d in results[path].diagnostics if d.cell is None]

    # The failing call itself, then a call of the chain (a helper that backward-s), then a related place.
    for frame, how in [(innermost, "at the failing call")] + [(f, "at a call on the way to it") for f in reversed(frames[:-1])]:
        for item in found(frame.local or ""):
            if item.span.start.row <= frame.line <= item.span.end.row:
                return Diagnosis(traceback, innermost, item, frame.local, results[frame.local or ""].source, how)
    for item in found(innermost.local or ""):
        if any(r.span.start.row <= innermost.line <= r.span.end.row for r in item.related):
            return Diagnosis(traceback, innermost, item, innermost.local, results[innermost.local or ""].source, "whose freeing call is the failing one")
    nearby = sorted(found(innermost.local or ""), key=lambda d: abs(d.span.start.row - innermost.line))
    if nearby and abs(nearby[0].span.start.row - innermost.line) <= 40:
        return Diagnosis(traceback, innermost, nearby[0], innermost.local, results[innermost.local or ""].source, "near the failing call")
    return Diagnosis(traceback, innermost)


def _line(source: str | None, row: int) -> str:
    lines = (source or "").splitlines()
    return lines[row - 1].strip() if 1 <= row <= len(lines) else ""


def _where(path: str, row: int, cwd: Path) -> str:
    try:
        shown = os.path.relpath(path, cwd)
    except ValueError:
        shown = path
    return f"{shown if not shown.startswith('..') else path}:{row}"


def _related_label(message: str) -> str:
    """The role of a related place, from the words rules use for it (`conflict_related`)."""
    for words, label in (("optimizer step", "in-place step"), ("freed", "freeing call"),
                         ("assigned", "carrier"), ("retain_graph", "retained by")):
        if words in message:
            return label
    return "related"


def render(diagnosis: Diagnosis, cwd: Path) -> str:
    """The diagnosis as text; every statement the static analysis made is marked as inferred."""
    from gradguard.engine import Prepared
    from gradguard.fixes import fix_text_round, module_text, unified_diff
    from gradguard.report._common import rule_name

    traceback = diagnosis.traceback
    rank = f" (rank {traceback.rank})" if traceback.rank is not None else ""
    out = [f"{traceback.error_type}: {traceback.message.split('. ')[0]}{rank}", ""]
    frame = diagnosis.frame
    if frame is None or frame.local is None:
        out.append("No frame of this traceback is in local source: run gradguard explain where the code is.")
        return "\n".join(out) + "\n"
    source = Path(frame.local).read_text(encoding="utf-8", errors="replace")
    out.append(f"failing call   {_where(frame.local, frame.line, cwd)}   {_line(source, frame.line)}   (from the traceback)")
    finding = diagnosis.finding
    if finding is None:
        if traceback.kind == "inplace":
            out.append("cause          a tensor saved for the backward was modified in place afterwards; the static")
            out.append("               analysis (GG011: an optimizer step, or an in-place write into a tensor a node")
            out.append("               kept) found no such write here. Rerun under the monitor (`gradguard run")
            out.append("               SCRIPT`) or with torch.autograd.set_detect_anomaly(True) to see which edit it was.")
        else:
            out.append("cause          no gradguard finding at or near this call (the analysis did not see it);")
            out.append("               rerun under the monitor, `gradguard run SCRIPT`, for the runtime diagnosis.")
        return "\n".join(out) + "\n"
    path = diagnosis.finding_path or frame.local
    text = diagnosis.source or source
    inferred = "(inferred without a run)"
    out.append(f"rule           {finding.code} {rule_name(finding.code)}   {inferred}, {diagnosis.match}")
    out.append(f"diagnosis      {finding.message}")
    for related in finding.related:
        label = _related_label(related.message)
        row = related.span.start.row
        out.append(f"{label:<14} {_where(path, row, cwd)}   {_line(text, row)}   {related.message} {inferred}")
    fix = finding.fix
    if fix is not None:
        others: dict[str, str] = {}
        fixed, applied = fix_text_round(text, [fix], others)
        shown = _where(path, 1, cwd).rsplit(":", 1)[0]
        unsafe = " --unsafe-fixes" if fix.applicability.value == "unsafe" else ""
        label = f"fix ({fix.applicability.value})"
        out.append(f"{label:<14} {fix.message}   `gradguard lint --fix{unsafe} {shown}`")
        if applied:
            diff = unified_diff(Prepared(shown, text, "utf-8"), Prepared(shown, fixed, "utf-8"))
            out.extend("               " + line for line in diff.splitlines()[2:])
            # The project module where the cause sits, when the fix edits it.
            for other, after in sorted(others.items()):
                before = module_text(other)
                if before is None:
                    continue
                name = _where(other, 1, cwd).rsplit(":", 1)[0]
                diff = unified_diff(Prepared(name, before, "utf-8"), Prepared(name, after, "utf-8"))
                out.extend("               " + line for line in diff.splitlines())
    out.append(f"more           gradguard rule {finding.code}")
    return "\n".join(out) + "\n"


def explain(text: str, cwd: Path) -> tuple[str, int]:
    """The report for a log and the exit code: 0 diagnosed, 1 no static finding, 2 no autograd error."""
    traceback = pick(parse_log(text, cwd))
    if traceback is None:
        return ("No traceback with the double-backward or the in-place autograd error in this log.\n", 2)
    diagnosis = diagnose(traceback, cwd)
    return render(diagnosis, cwd), 0 if diagnosis.finding is not None else 1
