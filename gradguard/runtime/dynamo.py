"""Keeping torch.compile's dynamo out of gradguard's own code, without importing dynamo ourselves.

After a graph break dynamo evaluates every Python frame it meets, gradguard's wrapper included, unless
the file is on its skip list. Importing `torch._dynamo` costs seconds, so gradguard never does it:
if dynamo is already loaded at install time it is told at once; otherwise a finder on `sys.meta_path`
waits for `torch._dynamo` to be imported by the program and tells it right after. The finder answers
only for that one name and removes itself once it has fired (or when the monitor is uninstalled).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

DYNAMO = "torch._dynamo"


def exclude_gradguard() -> bool:
    """Add gradguard's folder to dynamo's skip list once; False when this dynamo has no such API."""
    try:
        from torch._dynamo import trace_rules

        folder = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        if not any(os.path.abspath(entry).rstrip(os.sep) == folder for entry in trace_rules.SKIP_DIRS):
            trace_rules.add("gradguard")
    except Exception:  # noqa: BLE001 - a future dynamo without trace_rules.add: the wrapper still works
        return False
    return True


class _ThenCall(importlib.abc.Loader):
    """Runs the real loader, then a callback; the module keeps the real loader."""

    def __init__(self, loader: Any, callback: Callable[[], None]) -> None:
        self._loader = loader
        self._callback = callback

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        spec = module.__spec__
        if spec is not None:
            spec.loader = self._loader
        module.__loader__ = self._loader
        self._loader.exec_module(module)
        self._callback()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


class DynamoWatcher(importlib.abc.MetaPathFinder):
    """Calls `callback` once, right after the program imports `torch._dynamo`."""

    def __init__(self, callback: Callable[[], None]) -> None:
        self._callback = callback
        self._searching = False

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != DYNAMO or self._searching:
            return None
        self._searching = True
        try:
            spec = importlib.util.find_spec(fullname)
        except (ImportError, ValueError):
            return None
        finally:
            self._searching = False
        if spec is None or spec.loader is None:
            return None
        spec.loader = _ThenCall(spec.loader, self._fire)
        return spec

    def _fire(self) -> None:
        self.remove()
        self._callback()

    def install(self) -> None:
        """Put the watcher first on `sys.meta_path`."""
        if self not in sys.meta_path:
            sys.meta_path.insert(0, self)

    def remove(self) -> None:
        """Take the watcher off `sys.meta_path` (idempotent)."""
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
