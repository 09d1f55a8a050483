"""The ring buffer of backward/grad calls, and where in the user's code each call came from.

The hot path (`monitor`'s wrapper) appends one plain list per call: never a tensor, a graph node or a
frame, so recording cannot extend any lifetime. Lines are resolved from (code object, instruction
offset) only when a diagnosis needs them.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import count
from types import CodeType, FrameType

from gradguard.analysis.api.torch_functions import GRAD_FUNCTION
from gradguard.runtime.project import ProjectAPI, load
from gradguard.analysis.api.torch_tensor import BACKWARD

RING_SIZE = 256
MAX_ROOTS = 4

# Positions in the raw list the hot path appends (a list is the cheapest mutable record).
INDEX, CODE, LASTI, SEQS, RETAIN, IS_GRAD, THREAD, DONE = range(8)

USER, LIBRARY, INTERNAL = 0, 1, 2


@dataclass(frozen=True)
class Site:
    """A place in the user's source: file, 1-based line and the function's qualified name."""

    filename: str
    line: int
    function: str


@dataclass(frozen=True)
class CallRecord:
    """One backward or grad call, as plain data.

    `root_seqs` are the creation sequence numbers of the call's root nodes (at most four); a root that
    had no `grad_fn` counts as -1. `completed` is False while the call runs and when it raised.
    """

    index: int
    site: Site | None
    root_seqs: tuple[int, ...]
    retain_graph: bool
    is_grad: bool
    thread: int
    completed: bool

    @property
    def frees_graph(self) -> bool:
        """True when the call released the saved tensors of the graph it ran through."""
        return not self.retain_graph

    @property
    def api(self) -> str:
        """`torch.autograd.grad` or `backward`: what the user called, for messages."""
        return GRAD_FUNCTION if self.is_grad else BACKWARD


def line_of(code: CodeType, lasti: int) -> int:
    """The source line of the instruction at byte offset `lasti` in `code`."""
    best = code.co_firstlineno
    for start, end, line in code.co_lines():
        if start <= lasti < end:
            return line if line is not None else best
        if line is not None and start <= lasti:
            best = line
    return best


def site_of(code: CodeType | None, lasti: int) -> Site | None:
    """The `Site` of an instruction, or None when no user frame was found."""
    if code is None:
        return None
    return Site(code.co_filename, line_of(code, lasti), code.co_qualname)


def to_record(raw: list) -> CallRecord:
    """Freeze one raw hot-path record."""
    return CallRecord(
        index=raw[INDEX],
        site=site_of(raw[CODE], raw[LASTI]),
        root_seqs=raw[SEQS],
        retain_graph=bool(raw[RETAIN]),
        is_grad=bool(raw[IS_GRAD]),
        thread=raw[THREAD],
        completed=bool(raw[DONE]),
    )


class CallLog:
    """The last `RING_SIZE` calls and a run-wide counter; appends are atomic under the GIL."""

    __slots__ = ("_ring", "append", "next_index")

    def __init__(self, size: int = RING_SIZE) -> None:
        self._ring: deque[list] = deque(maxlen=size)
        self.next_index: Callable[[], int] = count(1).__next__
        self.append = self._ring.append

    def snapshot(self) -> tuple[CallRecord, ...]:
        """A frozen copy of the buffer, oldest first (safe while other threads append)."""
        return tuple(to_record(raw) for raw in self._ring.copy())

    def __len__(self) -> int:
        return len(self._ring)


def _internal_prefixes() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(gradguard and torch folders, stdlib and site-packages folders) as path prefixes."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    internal = [here + os.sep]
    torch_module = sys.modules.get("torch")
    torch_file = getattr(torch_module, "__file__", None)
    if torch_file:
        internal.append(os.path.dirname(os.path.abspath(torch_file)) + os.sep)
    library: list[str] = []
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        folder = paths.get(key)
        if folder:
            library.append(os.path.abspath(folder) + os.sep)
    for folder in sys.path:
        if folder and os.path.basename(folder.rstrip(os.sep)) in ("site-packages", "dist-packages"):
            library.append(os.path.abspath(folder) + os.sep)
    return tuple(internal), tuple(sorted(set(library)))


class CodeClassifier:
    """Tells user code from library code from torch/gradguard code, cached per code object.

    The cache holds code objects only (they pin no tensors); it is bounded so notebooks that create a
    code object per cell run cannot grow it forever.
    """

    __slots__ = ("_internal", "_library", "_lock", "_project", "cache")

    LIMIT = 4096

    def __init__(self, project: ProjectAPI | None = None) -> None:
        self.cache: dict[CodeType, int] = {}
        self._internal, self._library = _internal_prefixes()
        self._lock = threading.Lock()
        self._project = project

    @property
    def project(self) -> ProjectAPI:
        """The project's `[tool.gradguard.api]`, read on first need: by then `gradguard run` has set
        `sys.argv[0]` to the script, whose folder the configuration is looked for from."""
        if self._project is None:
            self._project = load()
        return self._project

    def classify(self, code: CodeType) -> int:
        """USER, LIBRARY or INTERNAL for `code`, computing and caching it on a miss.

        A helper the project declares as calling backward (`Engine.step`) counts as library code:
        the user's call is where it is called."""
        filename = code.co_filename
        if filename.startswith(self._internal):
            kind = INTERNAL
        elif filename.startswith(("<frozen ", *self._library)):
            kind = LIBRARY
        elif self.project.runs_backward(code):
            kind = LIBRARY
        else:
            kind = USER
        with self._lock:
            if len(self.cache) >= self.LIMIT:
                self.cache.clear()
            self.cache[code] = kind
        return kind

    def user_frame(self, frame: FrameType | None) -> FrameType | None:
        """The first user frame at or above `frame`; else the first library frame; else None."""
        cache_get = self.cache.get
        fallback = None
        while frame is not None:
            code = frame.f_code
            kind = cache_get(code)
            if kind is None:
                kind = self.classify(code)
            if kind == USER:
                return frame
            if kind == LIBRARY and fallback is None:
                fallback = frame
            frame = frame.f_back
        return fallback

    def first_outside(self, frame: FrameType | None) -> FrameType | None:
        """The first frame at or above `frame` that is not torch's or gradguard's own code."""
        while frame is not None:
            kind = self.cache.get(frame.f_code)
            if kind is None:
                kind = self.classify(frame.f_code)
            if kind != INTERNAL:
                return frame
            frame = frame.f_back
        return None

    def user_frames(self, frame: FrameType | None, limit: int) -> Iterator[FrameType]:
        """Up to `limit` user frames from `frame` outwards (innermost first)."""
        found = 0
        while frame is not None and found < limit:
            kind = self.cache.get(frame.f_code)
            if kind is None:
                kind = self.classify(frame.f_code)
            if kind == USER:
                found += 1
                yield frame
            frame = frame.f_back

    def is_user(self, code: CodeType) -> bool:
        """True for code outside torch, gradguard, the standard library and site-packages."""
        kind = self.cache.get(code)
        if kind is None:
            kind = self.classify(code)
        return kind == USER
