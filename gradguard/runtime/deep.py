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
"""

from __future__ import annotations

import sys
import threading
from collections import deque
from collections.abc import Iterator
from typing import Any

from gradguard.runtime.records import USER, CodeClassifier

SITE_KEY = "gradguard_site"
HOLD = 4


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
        self._classifier = classifier
        self._held: deque[tuple[int, Any]] = deque(maxlen=hold)
        self._lock = threading.Lock()
        self._handle = torch.nn.modules.module.register_module_forward_hook(self._stamp)

    def _stamp(self, module: Any, args: Any, output: Any) -> None:
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
        """Remove the hook and drop every held root."""
        with self._lock:
            self._handle.remove()
            self._held.clear()
