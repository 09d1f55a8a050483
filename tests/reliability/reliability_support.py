"""Helpers of the reliability suite: the real CLI in a subprocess (optionally with a test hook loaded
into every gradguard process), a project folder, sample sources and the fuzzing budget.

The hook (`hooks/sitecustomize.py`) is found through PYTHONPATH, so it runs in the CLI process and in
every worker it starts, and changes no line of gradguard: it only wraps functions from the outside when
an environment variable asks for it.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parents[2]
HOOKS = Path(__file__).resolve().parent / "hooks"
HOSTILE = REPO / "fixtures" / "hostile"

# The plainest GG001: the same loss backward-ed twice without retain_graph (the second call raises).
BUGGY_SOURCE = """\
import torch

w = torch.randn(3, requires_grad=True)
loss = (w * 2).sum()
loss.backward()
loss.backward()
"""
BUGGY_ROW = 6

CLEAN_SOURCE = """\
import torch

w = torch.randn(3, requires_grad=True)
for step in range(3):
    loss = (w * 2).sum()
    loss.backward()
"""


def fuzz_long() -> bool:
    """Long fuzzing runs for local use: `GRADGUARD_FUZZ_LONG=1 pytest tests/reliability`."""
    return os.environ.get("GRADGUARD_FUZZ_LONG", "") not in ("", "0")


def fuzz_settings(ci_examples: int, long_examples: int = 5000) -> settings:
    """Hypothesis settings: a fixed, derandomized budget in CI; a long random search in long mode.

    Long mode keeps its example database in the user's temp folder (never in the checkout), so a failure
    found there is replayed first on the next long run.
    """
    common = {
        "deadline": None,
        "suppress_health_check": [
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
    }
    if fuzz_long():
        from hypothesis.database import DirectoryBasedExampleDatabase

        folder = Path(os.environ.get("TMPDIR", "/tmp")) / "gradguard-fuzz-db"
        return settings(
            max_examples=long_examples, database=DirectoryBasedExampleDatabase(str(folder)), **common
        )
    return settings(max_examples=ci_examples, derandomize=True, database=None, print_blob=True, **common)


def subprocess_env(extra: dict[str, str] | None = None, *, hooked: bool = False) -> dict[str, str]:
    """The environment of a gradguard subprocess importing this checkout (and the test hook if asked)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GG_TEST_")}
    paths = [str(HOOKS)] if hooked else []
    paths += [str(REPO), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
    env.pop("NO_COLOR", None)
    env.update(extra or {})
    return env


def gradguard_command(*args: str) -> list[str]:
    """`python -P -m gradguard ARGS`: -P keeps the current folder off sys.path, as the installed
    `gradguard` script does, so a linted project's own modules can never shadow gradguard's imports."""
    return [sys.executable, "-P", "-m", "gradguard", *args]


def run_gradguard(
    *args: str,
    cwd: Path,
    hook: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI; `hook` holds the GG_TEST_* variables that switch the test hook on."""
    extra = {**(env or {}), **(hook or {})}
    return subprocess.run(
        gradguard_command(*args),
        cwd=cwd,
        env=subprocess_env(extra, hooked=hook is not None),
        capture_output=True,
        text=True,
        errors="surrogateescape",  # file names that are not UTF-8 come back as they are
        timeout=timeout,
        check=False,
    )


def hook_events(log: Path) -> list[dict[str, str]]:
    """What the hook recorded (one JSON object per line)."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]


@dataclass
class Project:
    """A temporary project folder with its own pyproject.toml (nothing above it configures a run)."""

    root: Path

    @classmethod
    def create(cls, root: Path, config: str = '[project]\nname = "demo"\n') -> Project:
        root.mkdir(parents=True, exist_ok=True)
        (root / "pyproject.toml").write_text(config, encoding="utf-8")
        return cls(root)

    def write(self, relative: str, content: str | bytes) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))
        return path

    def run(self, *args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
        return run_gradguard(*args, cwd=self.root, **kwargs)  # type: ignore[arg-type]


@contextlib.contextmanager
def deep_tree(levels: int) -> Iterator[tuple[Project, Path]]:
    """A project holding a folder chain `levels` deep; yields it and the deepest folder.

    It lives outside pytest's temporary folders and is removed with `rm -rf`: shutil.rmtree, and so
    pytest's clean-up of its old temporary folders, recurses once per level and fails on such a tree.
    """
    top = Path(tempfile.mkdtemp(prefix="gradguard-deep-"))
    try:
        project = Project.create(top / "proj")
        folder = project.root
        for _ in range(levels):
            folder = folder / "d"
            folder.mkdir()
        yield project, folder
    finally:
        subprocess.run(["rm", "-rf", str(top)], check=True)


def lines_for(output: str, name: str) -> list[str]:
    """The output lines about one file (`name:` or `name:row:col:` at the start)."""
    return [line for line in output.splitlines() if line.startswith(f"{name}:")]
