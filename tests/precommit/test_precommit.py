"""The published pre-commit hooks, run for real with pre-commit on a temporary git repository.

`pre-commit try-repo <this repo> gradguard --files ...` is how a user tries the hook; a
`.pre-commit-config.yaml` naming this repository is how they keep it. Both build the hook's environment
from this repository's HEAD commit (work not yet committed is not seen), installing gradguard and its
dependencies from the package index into a virtualenv: that environment must not contain torch.
try-repo keeps its environment in a temporary store it deletes; a config run keeps it under
PRE_COMMIT_HOME, where the test inspects it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]

BUGGY = """\
import torch

w = torch.randn(3, requires_grad=True)
loss = (w * 2).sum()
loss.backward()
loss.backward()
"""

CLEAN = """\
import torch

w = torch.randn(3, requires_grad=True)
for _ in range(3):
    loss = (w * 2).sum()
    loss.backward()
"""


def _env(home: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("GIT_", "PYTHON", "PRE_COMMIT"))}
    env["PRE_COMMIT_HOME"] = str(home)
    env["NO_COLOR"] = "1"
    return env


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.name=gradguard tests", "-c", "user.email=tests@gradguard.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@dataclass(frozen=True)
class Trial:
    """Where the hook is tried: the user's project, the environment, and gradguard's commit."""

    project: Path
    env: dict[str, str]
    ref: str

    def try_repo(self, *files: str) -> subprocess.CompletedProcess[str]:
        """Run gradguard's `gradguard` hook on `files` the way a user trying it would."""
        return self._pre_commit("try-repo", str(REPO), "gradguard", "--ref", self.ref, "--verbose", "--files", *files)

    def run_config(self, hook: str, *files: str) -> subprocess.CompletedProcess[str]:
        """Run `hook` from a `.pre-commit-config.yaml` that names this repository at HEAD."""
        config = self.project / ".pre-commit-config.yaml"
        config.write_text(f"repos:\n  - repo: {REPO}\n    rev: {self.ref}\n    hooks:\n      - id: {hook}\n")
        _git("add", config.name, cwd=self.project)
        return self._pre_commit("run", hook, "--verbose", "--files", *files)

    def _pre_commit(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", *args],
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )


def _head() -> str:
    run = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True)
    return run.stdout.strip()


@pytest.fixture(scope="module")
def trial(tmp_path_factory: pytest.TempPathFactory) -> Trial:
    """A git repository holding a buggy and a clean script, and a pre-commit home of its own."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    pytest.importorskip("pre_commit")
    if not (REPO / ".git").exists():
        pytest.skip("pre-commit try-repo needs gradguard's own git checkout")
    root = tmp_path_factory.mktemp("precommit")
    project = root / "project"
    project.mkdir()
    (project / "buggy.py").write_text(BUGGY)
    (project / "clean.py").write_text(CLEAN)
    _git("init", "-q", "-b", "main", cwd=project)
    _git("add", "buggy.py", "clean.py", cwd=project)
    _git("commit", "-q", "-m", "scripts", cwd=project)
    return Trial(project, _env(root / "pre-commit-home"), _head())


def test_hook_fails_on_the_buggy_file_and_passes_on_the_clean_one(trial: Trial) -> None:
    buggy = trial.try_repo("buggy.py")
    output = buggy.stdout + buggy.stderr
    assert buggy.returncode == 1, output
    assert "gradguard" in output and "Failed" in output
    assert "buggy.py:6:1: GG001" in output, output

    clean = trial.try_repo("clean.py")
    output = clean.stdout + clean.stderr
    assert clean.returncode == 0, output
    assert "Passed" in output


def test_configured_hook_runs_in_an_environment_without_torch(trial: Trial) -> None:
    buggy = trial.run_config("gradguard", "buggy.py", "clean.py")
    assert buggy.returncode == 1, buggy.stdout + buggy.stderr
    assert "buggy.py:6:1: GG001" in buggy.stdout
    assert "clean.py" not in buggy.stdout
    home = Path(trial.env["PRE_COMMIT_HOME"])
    pythons = sorted(home.glob("repo*/py_env-*/bin/python"))
    assert pythons, f"no hook environment under {home}"
    probe = (
        "import importlib.util, json; "
        "print(json.dumps({name: importlib.util.find_spec(name) is not None "
        "for name in ('gradguard', 'libcst', 'rich', 'click', 'torch')}))"
    )
    for python in pythons:
        found = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=True)
        assert found.stdout.strip() == (
            '{"gradguard": true, "libcst": true, "rich": true, "click": true, "torch": false}'
        ), python
