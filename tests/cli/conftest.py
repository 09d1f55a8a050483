"""Fixtures of the end-to-end tests of `gradguard lint` (helpers live in cli_support.py)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import Project, subprocess_env


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """An empty project folder with a `pyproject.toml` (so nothing above it configures the run)."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\n', encoding="utf-8")
    monkeypatch.delenv("NO_COLOR", raising=False)
    return Project(root, monkeypatch)


@pytest.fixture
def gradguard_process() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run `python -m gradguard ARGS` as a real subprocess."""

    def run(
        *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "gradguard", *args],
            cwd=cwd,
            env=subprocess_env(env),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run
