"""Fixtures of the reliability suite (helpers live in reliability_support.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from reliability_support import HOSTILE, Project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """An empty project folder with a `pyproject.toml` (so nothing above it configures the run)."""
    return Project.create(tmp_path / "proj")


@pytest.fixture
def hostile(project: Project) -> Project:
    """A project holding a copy of `fixtures/hostile/` (without the file that keeps it out of a plain
    `gradguard lint fixtures/`)."""
    for source in sorted(HOSTILE.iterdir()):
        if source.name != "gradguard.toml":
            shutil.copy2(source, project.root / source.name)
    return project
