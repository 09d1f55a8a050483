"""The command itself: exit codes, formats, noqa, notebooks, colour, `rule`, `run`, `--version`,
`python -m gradguard`, and a lint run with torch blocked from import."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import CLEAN_SOURCE, GG001_ROW, GG001_SOURCE, Project, subprocess_env
from click.testing import CliRunner

from gradguard import __version__, catalogue
from gradguard.cli import main

Process = Callable[..., subprocess.CompletedProcess[str]]


def test_exit_codes(project: Project) -> None:
    project.write("clean.py", CLEAN_SOURCE)
    assert project.lint().exit_code == 0
    project.write("train.py", GG001_SOURCE)
    assert project.lint().exit_code == 1
    assert project.lint("--exit-zero").exit_code == 0
    project.write("broken.py", "loss.backward(\n")
    assert project.lint("--exit-zero").exit_code == 2
    assert project.lint("clean.py").exit_code == 0
    assert project.lint("--output-format", "xml").exit_code == 2


def test_concise_is_the_default_and_paths_default_to_the_current_folder(project: Project) -> None:
    project.write("src/train.py", GG001_SOURCE)
    result = project.lint()
    assert result.stdout.splitlines()[0].startswith(f"src/train.py:{GG001_ROW}:")
    assert " GG001 " in result.stdout.splitlines()[0]
    inside = project.lint(cwd=project.root / "src")
    assert inside.stdout.splitlines()[0].startswith(f"train.py:{GG001_ROW}:")


def test_every_output_format(project: Project) -> None:
    project.write("train.py", GG001_SOURCE)
    full = project.lint("--output-format", "full")
    assert full.exit_code == 1
    assert "loss.backward()" in full.stdout and "GG001" in full.stdout
    _result, entries = project.lint_json()
    assert [(e["code"], e["location"]["row"], e["cell"]) for e in entries] == [("GG001", GG001_ROW, None)]
    assert entries[0]["filename"] == str(project.root / "train.py")
    github = project.lint("--output-format", "github")
    assert github.stdout.startswith(f"::error file=train.py,line={GG001_ROW}")
    sarif = json.loads(project.lint("--output-format", "sarif").stdout)
    assert sarif["version"] == "2.1.0"
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["GG001"]
    stats = project.lint("--statistics")
    assert stats.exit_code == 1
    assert "GG001" in stats.stdout and "train.py" not in stats.stdout


def test_noqa_end_to_end(project: Project) -> None:
    lines = GG001_SOURCE.splitlines()

    def with_comment(comment: str) -> str:
        return "\n".join([*lines[:-1], lines[-1] + comment]) + "\n"

    project.write("a.py", with_comment("  # noqa: GG001"))
    project.write("b.py", with_comment("  # noqa: GG003, GG001"))
    project.write("c.py", with_comment("  # noqa"))
    project.write("d.py", with_comment("  # noqa: GG003"))
    project.write("e.py", with_comment("  # noqa: E501"))
    # GG003 silences nothing in b.py and d.py: GG100 says so, on the directive's line.
    assert project.codes_by_file() == {
        "b.py": [("GG100", GG001_ROW)],
        "d.py": [("GG001", GG001_ROW), ("GG100", GG001_ROW)],
        "e.py": [("GG001", GG001_ROW)],
    }


def _notebook(cells: list[tuple[str, str]]) -> str:
    return json.dumps(
        {
            "cells": [
                {"cell_type": kind, "metadata": {}, "source": source.splitlines(keepends=True)}
                | ({"execution_count": None, "outputs": []} if kind == "code" else {})
                for kind, source in cells
            ],
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        },
        indent=1,
    )


def test_notebook_findings_name_the_cell_and_the_row_in_it(project: Project) -> None:
    head = GG001_SOURCE.splitlines(keepends=True)
    project.write(
        "explore.ipynb",
        _notebook(
            [
                ("markdown", "# Exploring\n"),
                ("code", "%matplotlib inline\n!pip install torch\n" + "".join(head[:4])),
                ("markdown", "Now train twice\n"),
                ("code", "%%time\n" + "".join(head[4:])),
                ("code", "%%bash\necho loss.backward()\n"),
            ]
        ),
    )
    _result, entries = project.lint_json()
    assert [(e["code"], e["cell"], e["location"]["row"]) for e in entries] == [("GG001", 4, 3)]
    concise = project.lint()
    assert concise.stdout.splitlines()[0].startswith("explore.ipynb:cell 4:3:")


def test_progress_and_colour_only_on_a_terminal(project: Project) -> None:
    project.write("train.py", GG001_SOURCE)
    piped = subprocess.run(
        [sys.executable, "-m", "gradguard", "lint"],
        cwd=project.root,
        env=subprocess_env(),
        capture_output=True,
        text=True,
    )
    assert piped.returncode == 1
    assert "\x1b[" not in piped.stdout
    assert piped.stderr == ""

    def on_terminal(env: dict[str, str]) -> str:
        leader, follower = pty.openpty()
        done = subprocess.run(
            [sys.executable, "-m", "gradguard", "lint"],
            cwd=project.root,
            env=subprocess_env(env),
            stdout=follower,
            stderr=subprocess.DEVNULL,
            timeout=120,
        )
        os.close(follower)
        text = _read_all(leader)
        assert done.returncode == 1
        return text

    assert "\x1b[" in on_terminal({"TERM": "xterm-256color"})
    plain = on_terminal({"TERM": "xterm-256color", "NO_COLOR": "1"})
    assert "\x1b[" not in plain and "GG001" in plain


def test_progress_bar_on_a_terminal_for_a_long_run(project: Project) -> None:
    for index in range(40):
        project.write(f"pkg/train{index}.py", GG001_SOURCE * 40)
    leader, follower = pty.openpty()
    shown_chunks: list[str] = []
    # Drain the terminal while gradguard runs: a full pty buffer would block the progress bar.
    reader = threading.Thread(target=lambda: shown_chunks.append(_read_all(leader)), daemon=True)
    reader.start()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "gradguard",
            "lint",
            "--no-cache",
            "--workers",
            "1",
            "--output-format",
            "json",
        ],
        cwd=project.root,
        env=subprocess_env({"TERM": "xterm-256color"}),
        stdout=subprocess.PIPE,
        stderr=follower,
        timeout=300,
    )
    os.close(follower)
    reader.join(timeout=30)
    shown = "".join(shown_chunks)
    assert done.returncode == 1
    assert len({entry["filename"] for entry in json.loads(done.stdout)}) == 40
    assert "Linting" in shown and "/40" in shown


def _read_all(fd: int) -> str:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks).decode(errors="replace")


def test_version(gradguard_process: Process, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.output == f"gradguard {__version__}\n"
    done = gradguard_process("--version", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == f"gradguard {__version__}\n"


def test_python_dash_m_gradguard_lints(project: Project, gradguard_process: Process) -> None:
    project.write("train.py", GG001_SOURCE)
    done = gradguard_process("lint", "--no-cache", cwd=project.root)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith(f"train.py:{GG001_ROW}:")


BLOCK_TORCH = """\
import importlib.abc
import os
import sys


class _BlockTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            with open(os.environ["TORCH_MARKER"], "a") as handle:
                handle.write(f"{os.getpid()} imported {name}\\n")
            raise ImportError(f"torch is blocked in this test ({name})")
        return None


sys.meta_path.insert(0, _BlockTorch())
"""


def test_lint_never_imports_torch(project: Project, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(BLOCK_TORCH, encoding="utf-8")
    marker = tmp_path / "torch-imported.txt"
    for index in range(6):
        project.write(f"pkg/train{index}.py", GG001_SOURCE + "# padding\n" * 3000)
    project.write("explore.ipynb", _notebook([("code", GG001_SOURCE)]))
    env = subprocess_env({"TORCH_MARKER": str(marker)})
    env["PYTHONPATH"] = os.pathsep.join([str(blocker), env["PYTHONPATH"]])
    for extra in (["--workers", "2"], ["--workers", "1"], []):
        done = subprocess.run(
            [sys.executable, "-m", "gradguard", "lint", "--output-format", "json", *extra],
            cwd=project.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert not marker.exists(), marker.read_text()
        assert done.returncode == 1, done.stderr
        assert len(json.loads(done.stdout)) == 7
    probe = subprocess.run(
        [sys.executable, "-c", "import torch"], env=env, capture_output=True, text=True, timeout=60
    )
    assert probe.returncode != 0 and marker.exists(), "the blocker itself must work"


def test_rule_command() -> None:
    result = CliRunner().invoke(main, ["rule", "GG001"])
    assert result.exit_code == 0, result.output
    assert "GG001" in result.output
    listing = CliRunner().invoke(main, ["rule", "--all"])
    assert listing.exit_code == 0
    assert all(code in listing.output for code in catalogue.load()), listing.output
    unknown = CliRunner().invoke(main, ["rule", "GG999"])
    assert unknown.exit_code == 2
    assert "unknown rule code 'GG999'" in unknown.stderr
    assert CliRunner().invoke(main, ["rule"]).exit_code == 2


@pytest.mark.torch
def test_run_delegates_to_the_runtime(tmp_path: Path, gradguard_process: Process) -> None:
    script = tmp_path / "job.py"
    script.write_text("import sys\nprint('argv', sys.argv[1:], __name__)\nsys.exit(3)\n", encoding="utf-8")
    done = gradguard_process("run", "job.py", "--lr", "3", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert done.stdout.strip() == "argv ['--lr', '3'] __main__"
    usage = gradguard_process("run", cwd=tmp_path)
    assert usage.returncode == 2
