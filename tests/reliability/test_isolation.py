"""gradguard reads code and never runs it, and never touches the network.

The linted project is full of traps: a script, a package, a notebook cell, a local `torch.py`,
`sitecustomize.py`, `conftest.py`, `setup.py` and `__main__.py` that each create a marker file the moment
they are imported or run. Every command and output format runs over it; no marker ever appears. The network test blocks
sockets and name resolution in every gradguard process (the test hook) and records any attempt.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from reliability_support import BUGGY_SOURCE, Project, hook_events, subprocess_env

TRAP_FILES = {
    "script": "train.py",
    "package": "evilpkg/__init__.py",
    "local_torch": "torch.py",
    "sitecustomize": "sitecustomize.py",
    "conftest": "conftest.py",
    "setup": "setup.py",
    "main": "__main__.py",
}


def _trap(markers: Path, name: str) -> str:
    return f"import pathlib\npathlib.Path({str(markers / name)!r}).write_text('executed')\n"


def _trapped_project(project: Project, markers: Path) -> None:
    markers.mkdir()
    extra = {"script": "import evilpkg\n" + BUGGY_SOURCE}
    for name, relative in TRAP_FILES.items():
        project.write(relative, _trap(markers, name) + extra.get(name, "loss.backward()\n"))
    cell = _trap(markers, "notebook") + BUGGY_SOURCE
    project.write(
        "explore.ipynb",
        json.dumps(
            {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": cell}], "metadata": {}}
        ),
    )


@pytest.mark.slow
def test_linting_never_imports_or_runs_the_code_it_reads(project: Project) -> None:
    markers = project.root.parent / "markers"
    _trapped_project(project, markers)
    runs = [
        ("lint", "--no-cache"),
        ("lint", "--output-format", "json"),
        ("lint", "--output-format", "full"),  # warm: from the cache
        ("lint", "--output-format", "sarif", "--statistics"),
        ("lint", "--no-cache", "--workers", "2"),
        ("lint", "--no-cache", "--diff", "--unsafe-fixes"),
        ("lint", "--no-cache", "--fix", "--unsafe-fixes"),
    ]
    for args in runs:
        done = project.run(*args)
        assert done.returncode in (0, 1), (args, done.stdout + done.stderr)
        assert sorted(path.name for path in markers.iterdir()) == [], args


def test_the_traps_are_real(project: Project) -> None:
    """Run by Python, the same files do create their markers (so the test above proves something)."""
    markers = project.root.parent / "markers"
    _trapped_project(project, markers)
    runner = (
        "import json, runpy, sys\n"
        "sys.path.insert(0, '.')\n"
        f"for path in {sorted(TRAP_FILES.values())!r}:\n"
        "    try:\n"
        "        runpy.run_path(path)\n"
        "    except Exception:\n"
        "        pass\n"
        "cell = json.load(open('explore.ipynb'))['cells'][0]['source']\n"
        "try:\n"
        "    exec(cell, {})\n"
        "except Exception:\n"
        "    pass\n"
    )
    subprocess.run(
        [sys.executable, "-c", runner], cwd=project.root, capture_output=True, check=False, timeout=60
    )
    assert sorted(path.name for path in markers.iterdir()) == sorted([*TRAP_FILES, "notebook"])


def test_no_network_is_ever_used(project: Project) -> None:
    project.write("train.py", BUGGY_SOURCE)
    for index in range(4):
        project.write(f"pkg/m{index}.py", BUGGY_SOURCE)
    project.write(
        "nb.ipynb",
        json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": BUGGY_SOURCE}]}),
    )
    log = project.root.parent / "hook.log"
    hook = {"GG_TEST_NO_NETWORK": "1", "GG_TEST_LOG": str(log)}
    expected = {
        ("lint", "--no-cache"): 1,
        ("lint",): 1,
        ("lint", "--output-format", "sarif"): 1,
        ("lint", "--no-cache", "--workers", "2", "--output-format", "full"): 1,
        ("lint", "--no-cache", "--fix", "--unsafe-fixes"): 0,
        ("rule", "GG001"): 0,
        ("--version",): 0,
    }
    for args, code in expected.items():
        done = project.run(*args, hook=hook)
        assert done.returncode == code, (args, done.stdout + done.stderr)
        assert "network blocked" not in done.stdout + done.stderr
    assert [event for event in hook_events(log) if event["event"] == "network"] == []


def test_the_network_block_is_real(tmp_path: Path) -> None:
    """Under the hook, a connection attempt fails and is recorded (so the test above proves something)."""
    log = tmp_path / "hook.log"
    probe = "import socket\ntry:\n    socket.create_connection(('127.0.0.1', 9), timeout=1)\nexcept OSError as exc:\n    print(exc)\n"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env=subprocess_env({"GG_TEST_NO_NETWORK": "1", "GG_TEST_LOG": str(log)}, hooked=True),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "network blocked by the test hook" in done.stdout
    assert [event["call"] for event in hook_events(log)] == ["socket.create_connection"]
