"""`gradguard lint --watch`: lint again whenever a linted file or a configuration file changes.

Polling, as ruff's `--watch` falls back to: every `interval` seconds the paths are discovered again and
their sizes and modification times compared, so a file created, deleted or edited starts a new round
(the cache's index makes the round that follows cheap: only what changed is read). No threads and no
platform file-system API.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable

# What a watched path looked like: (size, mtime_ns), or None when it did not exist.
Stamp = tuple[int, int] | None


def snapshot(paths: Iterable[str]) -> dict[str, Stamp]:
    """The size and modification time of each path (None for a path that does not exist)."""
    found: dict[str, Stamp] = {}
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            found[path] = None
        else:
            found[path] = (info.st_size, info.st_mtime_ns)
    return found


def wait_for_change(
    watched: Callable[[], Iterable[str]],
    before: dict[str, Stamp],
    *,
    interval: float = 0.5,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Stamp]:
    """Block until the snapshot of the paths `watched()` names differs from `before`; return it."""
    while True:
        sleep(interval)
        now = snapshot(watched())
        if now != before:
            return now
