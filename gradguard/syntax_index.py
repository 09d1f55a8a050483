"""Which file contents are known to compile, so a warm run does not syntax-check them again.

Every file gradguard lints is syntax-checked, also those the prefilter skips without analysis (see
`engine.syntax_error`). That check costs about as much as a warm run itself on a large tree, so the
contents that passed are remembered: one file in the cache folder, `compiled-<python>-<gradguard>.txt`,
one BLAKE2 digest of a file's bytes per line. The verdict depends on the Python version only, hence the
name. Unreadable or garbled lines are ignored; the file is rewritten atomically at the end of a run.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tempfile
from pathlib import Path

from gradguard import __version__

_DIGEST = re.compile(r"[0-9a-f]{32}")


def digest(data: bytes) -> str:
    """The key of a file's content."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class CompiledIndex:
    """The set of contents that compiled, read from and written to one cache folder (None: kept in memory)."""

    def __init__(self, folder: Path | None) -> None:
        self.path = (
            folder / f"compiled-py{sys.version_info[0]}{sys.version_info[1]}-{__version__}.txt"
            if folder is not None
            else None
        )
        self.known: set[str] = set()
        self.added = False
        if self.path is not None:
            try:
                text = self.path.read_text(encoding="ascii", errors="replace")
            except OSError:
                text = ""
            self.known = {line for line in text.splitlines() if _DIGEST.fullmatch(line)}

    def compiles(self, data: bytes) -> bool:
        """True when this content is known to compile."""
        return digest(data) in self.known

    def add(self, data: bytes) -> None:
        """Remember that this content compiles."""
        self.known.add(digest(data))
        self.added = True

    def save(self) -> None:
        """Write the index (only when something was added and the cache folder exists)."""
        if self.path is None or not self.added or not self.path.parent.is_dir():
            return
        try:
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tmp-", suffix=".txt")
            try:
                with os.fdopen(fd, "w", encoding="ascii") as handle:
                    handle.write("".join(f"{key}\n" for key in sorted(self.known)))
                os.replace(tmp, self.path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            return
