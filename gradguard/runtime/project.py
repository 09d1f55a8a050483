"""What the project declares about its own helpers (`[tool.gradguard.api]`), as the runtime uses it.

The monitor sees real graphs, so `fresh` and `keeps-state` need no declaration here. Two entries
change what it says: a `calls-backward` helper (`engine.Engine.step`) is where the user's call is,
not the `loss.backward()` inside it; a `detaches` helper (`utils.repackage_hidden`) is what the fix
for a state carried across iterations calls, instead of new code.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from types import CodeType

from gradguard.analysis.api.facts import Returns


@dataclass(frozen=True)
class ProjectAPI:
    """The declarations in force, by qualified name."""

    calls_backward: frozenset[str] = frozenset()
    detaches: tuple[str, ...] = ()

    def runs_backward(self, code: CodeType) -> bool:
        """Whether `code` is one of the declared helpers that call backward (`Engine.step` in engine.py)."""
        if not self.calls_backward:
            return False
        qualname = code.co_qualname
        stem = os.path.splitext(os.path.basename(code.co_filename))[0]
        if stem == "__init__":
            stem = os.path.basename(os.path.dirname(code.co_filename))
        suffix = "." + qualname
        return any(name.endswith(suffix) and name[: -len(suffix)].rsplit(".", 1)[-1] == stem
                   for name in self.calls_backward)


def start_folder() -> str:
    """Where the program's configuration is looked for: the script's folder, else the working folder."""
    script = sys.argv[0] if sys.argv else ""
    if script and os.path.isfile(script):
        return os.path.dirname(os.path.abspath(script))
    return os.getcwd()


def load(start: str | None = None) -> ProjectAPI:
    """The declarations of the configuration nearest `start`; an invalid one is reported on stderr
    once and left out, so that the program runs on as it would without gradguard."""
    from gradguard.config import ConfigError, project_api

    try:
        facts = project_api(start if start is not None else start_folder())
    except ConfigError as error:
        print(f"gradguard: {error}; the runtime monitor goes on without [tool.gradguard.api]", file=sys.stderr)
        return ProjectAPI()
    except OSError:
        return ProjectAPI()
    return ProjectAPI(
        calls_backward=frozenset(f.name for f in facts if f.backward is not None),
        detaches=tuple(f.name for f in facts if f.returns is Returns.CUT),
    )
