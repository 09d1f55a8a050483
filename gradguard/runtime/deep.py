"""Opt-in deep mode: record more while the program runs, for richer diagnoses.

Two things, both off by default:
- creation sites: a global module forward hook stamps the user line that called each module onto
  the `grad_fn.metadata` of the module's outputs (a dict stored on the C++ node, so it lives and dies
  with the node);
- the roots of the last few non-retaining calls, so the diagnosis can tell exactly which earlier call
  freed the stale node and which shared tensor carried it. A held root keeps the graph's skeleton
  (~0.4 KB per node) and any requires-grad leaf inputs alive until it drops out of the window; saved
  activations are already freed. Roots of retain_graph=True calls are never held (they would keep
  every activation alive).

Deep mode refuses compiled regions: a global module hook, seen by torch.compile, splits the compiled
graph at every module call (and torch warns about it), which changes the fused kernels and so the last
bits of the results. So creation-site stamping stops, with one warning, as soon as the program calls
`torch.compile` (wrapped while deep mode is on), or as soon as dynamo has compiled any code (a module
compiled before deep mode started: its first compiled steps ran with the hook, and the warning says so). Holding roots changes no
number and stays on.
"""

from __future__ import annotations

import sys
import threading
import warnings
from collections import deque
from collections.abc import Iterator
from typing import Any

from gradguard.runtime.records import USER, CodeClassifier

SITE_KEY = "gradguard_site"
HOLD = 4
COMPILED_WARNING = (
    "gradguard: deep mode does not record creation sites in compiled code (torch.compile): its global "
    "module hook would split the compiled graph and change results in the last bits. Creation sites "
    "are off for the rest of this run; everything else the monitor does is unchanged."
)
COMPILE_STARTED_WARNING = (
    " Deep mode met a compiled module that started before it did: the steps compiled so far ran with "
    "the hook and may differ in the last bits."
)


def _tensors(output: Any, depth: int = 0) -> Iterator[Any]:
    grad_fn = getattr(output, "grad_fn", None)
    if grad_fn is not None:
        yield output
    elif depth < 2 and isinstance(output, (tuple, list)):
        for item in output[:16]:
            yield from _tensors(item, depth + 1)


class DeepRecorder:
    """Module-output stamping and a window of recent non-retaining roots."""

    def __init__(self, torch: Any, classifier: CodeClassifier, hold: int = HOLD) -> None:
        self._torch = torch
        self._classifier = classifier
        self._held: deque[tuple[int, Any]] = deque(maxlen=hold)
        self._lock = threading.Lock()
        self._handle: Any = None
        self._compile: Any = None
        self._refused = False
        if _dynamo_has_compiled():
            self._refuse_compiled("")
            return
        self._handle = torch.nn.modules.module.register_module_forward_hook(self._stamp)
        self._wrap_compile()

    @property
    def stamping(self) -> bool:
        """True while creation sites are recorded (False once compiled code was met)."""
        return self._handle is not None

    def _wrap_compile(self) -> None:
        original = getattr(self._torch, "compile", None)
        if original is None:
            return
        recorder = self

        def compile(*args: Any, **kwargs: Any) -> Any:  # noqa: A001 - stands in for torch.compile
            recorder._refuse_compiled("")
            return original(*args, **kwargs)

        compile.__wrapped__ = original  # type: ignore[attr-defined]
        compile.__doc__ = original.__doc__
        self._compile = (original, compile)
        self._torch.compile = compile

    def _unwrap_compile(self) -> None:
        if self._compile is not None:
            original, wrapper = self._compile
            if getattr(self._torch, "compile", None) is wrapper:
                self._torch.compile = original
            self._compile = None

    def _refuse_compiled(self, extra: str) -> None:
        """Stop stamping for good (removing the global hook before torch.compile sees it), warn once."""
        with self._lock:
            handle, self._handle = self._handle, None
            first, self._refused = not self._refused, True
            self._unwrap_compile()
        if handle is not None:
            handle.remove()
        if first:
            warnings.warn(COMPILED_WARNING + extra, RuntimeWarning, stacklevel=3)

    def _stamp(self, module: Any, args: Any, output: Any) -> None:
        if _dynamo_has_compiled():  # a module compiled before deep mode started runs now
            self._refuse_compiled(COMPILE_STARTED_WARNING)
            return
        frame = sys._getframe(1)
        cache = self._classifier.cache
        while frame is not None:
            kind = cache.get(frame.f_code)
            if kind is None:
                kind = self._classifier.classify(frame.f_code)
            if kind == USER:
                break
            frame = frame.f_back
        if frame is None:
            return
        site = (frame.f_code.co_filename, frame.f_lineno, type(module).__name__)
        for tensor in _tensors(output):
            metadata = tensor.grad_fn.metadata
            if SITE_KEY not in metadata:
                metadata[SITE_KEY] = site

    def hold(self, index: int, outputs: Any) -> None:
        """Keep the root nodes of a completed non-retaining call (the oldest drops out)."""
        for item in outputs[:4]:
            node = getattr(item, "grad_fn", None)
            if node is None and isinstance(item, tuple):
                node = item[0]
            if node is not None:
                self._held.append((index, node))

    def held(self) -> tuple[tuple[int, Any], ...]:
        """The held (call index, root node) pairs, oldest first."""
        return tuple(self._held.copy())

    def close(self) -> None:
        """Remove the hook (and the torch.compile wrapper) and drop every held root."""
        with self._lock:
            if self._handle is not None:
                self._handle.remove()
                self._handle = None
            self._unwrap_compile()
            self._held.clear()


def _dynamo_has_compiled() -> bool:
    """True when dynamo already compiled code in this process (its counters say so; never imports it)."""
    utils = sys.modules.get("torch._dynamo.utils")
    counters = getattr(utils, "counters", None)
    try:
        frames = counters.get("frames") if counters else None  # .get: never adds a key to torch's dict
        return bool(frames and frames.get("total"))
    except (AttributeError, TypeError):
        return False
