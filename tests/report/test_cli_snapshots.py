"""End to end through the real CLI: what `gradguard lint` prints, in every format, on a small project.

The project holds the plainest double backward, a notebook doing the same across cells, a correct
training loop and a file with a syntax error. Snapshots use the real analysis and rule catalogue; the
project's folder is shown as `<ROOT>` and gradguard's version as `<version>`.
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import gradguard
from gradguard import catalogue
from gradguard.cli import main
from gradguard.report import FORMATS
from gradguard.report._common import display_body

REPO = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;]*m")

DOUBLE_BACKWARD = """\
import torch

w = torch.randn(3, requires_grad=True)
loss = (w * 2).sum()
loss.backward()
loss.backward()
"""

CLEAN = """\
import torch

w = torch.randn(3, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    loss = (w * 2).sum()
    loss.backward()
    optimizer.step()
"""

BROKEN = """\
import torch

def step(model, batch:
    loss = model(batch).sum()
    loss.backward()
"""

NOTEBOOK_CELLS = [
    ("markdown", "# Exploring gradients"),
    ("code", "%matplotlib inline\nimport torch\n\nw = torch.randn(3, requires_grad=True)\nloss = (w * 2).sum()"),
    ("code", "loss.backward()\nw.grad"),
    ("markdown", "Run it once more:"),
    ("code", "loss.backward()\nw.grad"),
]


def notebook_json(cells: list[tuple[str, str]]) -> str:
    """A minimal nbformat 4 notebook."""

    def cell(kind: str, source: str) -> dict[str, object]:
        lines = source.splitlines(keepends=True)
        if kind == "markdown":
            return {"cell_type": "markdown", "metadata": {}, "source": lines}
        return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": lines}

    document = {
        "cells": [cell(kind, source) for kind, source in cells],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(document, indent=1) + "\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small project, made the working directory."""
    root = tmp_path / "project"
    (root / "notebooks").mkdir(parents=True)
    (root / "double_backward.py").write_text(DOUBLE_BACKWARD)
    (root / "clean.py").write_text(CLEAN)
    (root / "broken.py").write_text(BROKEN)
    (root / "notebooks" / "explore.ipynb").write_text(notebook_json(NOTEBOOK_CELLS))
    monkeypatch.chdir(root)
    monkeypatch.delenv("NO_COLOR", raising=False)
    return root


def normalise(text: str, root: Path) -> str:
    """Stable across machines and releases: the project folder and gradguard's version replaced."""
    for form in {str(root.resolve()), str(root)}:
        text = text.replace(form, "<ROOT>")
    return text.replace(f'"version": "{gradguard.__version__}"', '"version": "<version>"')


def stable_sarif(text: str) -> str:
    """The SARIF log with the catalogue's rule entries checked here and left out of the snapshot.

    They hold whole rule documents, which change with every edit of rules/*.md; the unit tests
    snapshot their shape on sample documents.
    """
    log = json.loads(text)
    driver = log["runs"][0]["tool"]["driver"]
    assert [rule["id"] for rule in driver["rules"]] == list(catalogue.load())
    for rule in driver["rules"]:
        doc = catalogue.get(rule["id"])
        assert (rule["name"], rule["helpUri"]) == (doc.name, doc.url)
        assert rule["help"]["markdown"] == display_body(doc)
        assert rule["defaultConfiguration"] == {"level": doc.severity.value}
    driver["rules"] = f"<the {len(driver['rules'])} rules of the catalogue, in code order>"
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def lint(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["lint", "--no-cache", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("fmt", FORMATS)
def test_lint_output(fmt: str, project: Path, snapshot) -> None:
    code, out, err = lint("--output-format", fmt, ".")
    assert code == 2, err  # broken.py could not be linted
    assert "\x1b" not in out
    if fmt == "sarif":
        out = stable_sarif(out)
    snapshot(f"cli_{fmt}", normalise(out, project))


def test_lint_statistics(project: Path, snapshot) -> None:
    code, out, _ = lint("--statistics", ".")
    assert code == 2
    snapshot("cli_statistics", normalise(out, project))


def test_machine_formats_keep_stdout_parseable_and_tell_people_on_stderr(project: Path) -> None:
    code, out, err = lint("--output-format", "json", ".")
    assert code == 2
    assert json.loads(out)
    assert "broken.py:3:" in err


def test_exit_codes(project: Path) -> None:
    assert lint("clean.py")[:2] == (0, "All checks passed!\n")
    code, out, _ = lint("double_backward.py")
    assert code == 1
    assert out.startswith("double_backward.py:6:1: GG001 ")
    assert lint("--exit-zero", "double_backward.py")[0] == 0


def test_json_reads_like_ruffs(project: Path) -> None:
    _, out, _ = lint("--output-format", "json", "double_backward.py")
    (entry,) = json.loads(out)
    assert entry["filename"] == str(project / "double_backward.py")
    assert entry["code"] == "GG001"
    assert entry["location"] == {"row": 6, "column": 1}
    assert entry["url"] == catalogue.get("GG001").url
    assert entry["name"] == catalogue.get("GG001").name
    assert entry["cell"] is None
    assert {"filename", "location", "message"} <= set(entry["related"][0])


def _cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.pop("NO_COLOR", None)
    env.pop("FORCE_COLOR", None)
    return env


def test_a_real_process_prints_what_the_runner_saw(project: Path) -> None:
    _, expected, _ = lint(".")
    run = subprocess.run(
        [sys.executable, "-m", "gradguard", "lint", "--no-cache", "."],
        cwd=project,
        env=_cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 2, run.stderr
    assert run.stdout == expected
    assert "Traceback" not in run.stderr


def _on_a_terminal(project: Path, env: dict[str, str]) -> str:
    """What `gradguard lint` writes when its output is a terminal (a pseudo-terminal here)."""
    primary, secondary = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "gradguard", "lint", "--no-cache", "double_backward.py"],
            cwd=project,
            env={**env, "TERM": "xterm-256color"},
            stdin=subprocess.DEVNULL,
            stdout=secondary,
            stderr=secondary,
        )
        os.close(secondary)
        chunks = []
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the terminal closes when the process exits
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.wait(timeout=120)
    finally:
        os.close(primary)
    return b"".join(chunks).decode("utf-8", "replace")


def test_colour_on_a_terminal_unless_no_color(project: Path) -> None:
    env = _cli_env()
    coloured = _on_a_terminal(project, env)
    assert ANSI.search(coloured), coloured
    assert "double_backward.py" in ANSI.sub("", coloured)
    plain = _on_a_terminal(project, {**env, "NO_COLOR": "1"})
    assert "\x1b" not in plain, plain
    assert "double_backward.py:6:1: GG001 " in plain


def test_rule_documents(project: Path) -> None:
    docs = list(catalogue.load().values())
    if not docs:
        pytest.skip("the catalogue in rules/ is empty")
    result = CliRunner().invoke(main, ["rule", "gg001"], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stdout.startswith(f"GG001 {catalogue.get('GG001').name}\n")
    assert "\x1b" not in result.stdout
    listing = CliRunner().invoke(main, ["rule", "--all"], catch_exceptions=False)
    assert listing.exit_code == 0
    assert [doc.code for doc in docs] == re.findall(r"^(GG\d{3})\b", listing.stdout, re.M)
