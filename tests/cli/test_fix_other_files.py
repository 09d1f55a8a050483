"""`--fix` and the reports when a fix edits another file of the project: the helper module where the
cause of a script's finding sits (its `torch.autograd.grad` frees the graph the script's backward
needs). The other file is written once, atomically, in its own encoding and line endings; `--diff`
shows it; JSON and SARIF name it; a piped buffer never writes it."""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest
from click.testing import CliRunner
from cli_support import Project

from gradguard.cli import main

HELPER = """\
import torch


def input_sensitivity(outputs, inputs):
    \"\"\"The mean norm of the outputs' gradient with respect to the inputs (only logged).\"\"\"
    (grads,) = torch.autograd.grad(outputs.sum(), inputs)
    return grads.flatten(1).norm(dim=1).mean().item()
"""

SCRIPT = """\
import torch
import torch.nn as nn

from probes import input_sensitivity

model = nn.Linear(8, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    x = torch.randn(4, 8, requires_grad=True)
    logits = model(x)
    loss = logits.pow(2).mean()
    if step % 5 == 0:
        print(input_sensitivity(logits, x))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""

FIXED_CALL = "torch.autograd.grad(outputs.sum(), inputs, retain_graph=True)"


def _setup(project: Project, helper: str | bytes = HELPER) -> None:
    project.write("probes.py", helper)
    project.write("train.py", SCRIPT)


def test_fix_writes_the_helper_module_and_says_so(project: Project) -> None:
    _setup(project)
    result = project.lint("train.py", "--fix", "--unsafe-fixes", "--no-cache")
    assert result.exit_code == 0, result.output
    assert FIXED_CALL in (project.root / "probes.py").read_text(encoding="utf-8")
    assert (project.root / "train.py").read_text(encoding="utf-8") == SCRIPT
    assert "Fixed probes.py too" in result.stderr
    assert project.lint("train.py", "--no-cache").exit_code == 0
    assert not [p for p in os.listdir(project.root) if p.endswith(".gradguard")]


def test_without_unsafe_fixes_the_helper_is_left_alone(project: Project) -> None:
    _setup(project)
    result = project.lint("train.py", "--fix", "--no-cache")
    assert result.exit_code == 1
    assert (project.root / "probes.py").read_text(encoding="utf-8") == HELPER


def test_diff_shows_the_helper_module_and_writes_nothing(project: Project) -> None:
    _setup(project)
    result = project.lint("train.py", "--diff", "--unsafe-fixes", "--no-cache")
    assert result.exit_code == 1
    assert "--- probes.py" in result.stdout and f"+    (grads,) = {FIXED_CALL}" in result.stdout
    assert (project.root / "probes.py").read_text(encoding="utf-8") == HELPER


def test_the_helper_keeps_its_bom_and_line_endings(project: Project) -> None:
    _setup(project, b"\xef\xbb\xbf" + HELPER.replace("\n", "\r\n").encode("utf-8"))
    result = project.lint("train.py", "--fix", "--unsafe-fixes", "--no-cache")
    assert result.exit_code == 0, result.output
    data = (project.root / "probes.py").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert data.count(b"\r\n") == HELPER.count("\n") and b"\n" not in data.replace(b"\r\n", b"")
    assert FIXED_CALL.encode() in data


def test_two_scripts_that_import_the_helper_fix_it_once(project: Project) -> None:
    _setup(project)
    project.write("evaluate.py", SCRIPT.replace("range(10)", "range(20)"))
    result = project.lint(".", "--fix", "--unsafe-fixes", "--no-cache")
    assert result.exit_code == 0, result.output
    assert (project.root / "probes.py").read_text(encoding="utf-8").count("retain_graph=True") == 1
    assert project.lint(".", "--no-cache").exit_code == 0


def test_json_names_the_file_of_an_edit_in_another_file(project: Project) -> None:
    _setup(project)
    _, findings = project.lint_json("train.py", "--no-cache", "--unsafe-fixes")
    (finding,) = findings
    (edit,) = finding["fix"]["edits"]
    assert edit["filename"] == str(project.root / "probes.py")
    assert edit["location"]["row"] == 6


def test_sarif_changes_the_helper_s_artifact(project: Project) -> None:
    _setup(project)
    result = project.lint("train.py", "--no-cache", "--output-format", "sarif")
    (run,) = json.loads(result.stdout)["runs"]
    (change,) = run["results"][0]["fixes"][0]["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "probes.py"


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root writes read-only files")
def test_a_read_only_helper_is_reported_and_left_as_it_was(project: Project) -> None:
    _setup(project)
    helper = project.root / "probes.py"
    helper.chmod(stat.S_IRUSR)
    result = project.lint("train.py", "--fix", "--unsafe-fixes", "--no-cache")
    assert result.exit_code == 2
    assert "probes.py" in result.stderr and "read-only" in result.stderr
    assert helper.read_text(encoding="utf-8") == HELPER


def test_a_piped_buffer_never_writes_another_file(project: Project) -> None:
    _setup(project)
    project.monkeypatch.chdir(project.root)
    result = CliRunner().invoke(main, ["lint", "-", "--stdin-filename", "train.py", "--fix", "--unsafe-fixes"],
                                input=SCRIPT)
    assert result.stdout == SCRIPT
    assert "GG007" in result.stderr
    assert (project.root / "probes.py").read_text(encoding="utf-8") == HELPER


LOOP = """\
def run_chunks(model, chunks, optimizer):
    state = model.initial(chunks[0].size(1))
    for chunk in chunks:
        optimizer.zero_grad()
        loss = 0.0
        for t in range(chunk.size(0) - 1):
            pred, state = model(chunk[t], state)
            loss = loss + (pred - chunk[t + 1]).pow(2).mean()
        loss.backward()
        optimizer.step()
"""

RUNS_LOOP = """\
import torch
import torch.nn as nn

from loop import run_chunks


class Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(4, 4)

    def initial(self, batch):
        return torch.zeros(batch, 4)

    def forward(self, x, h):
        h = self.cell(x, h)
        return h, h


model = Cell()
run_chunks(model, [torch.randn(5, 3, 4) for _ in range(3)], torch.optim.SGD(model.parameters(), lr=0.1))
"""


def test_diff_of_a_run_that_lints_the_module_too_shows_it_once(project: Project) -> None:
    project.write("loop.py", LOOP)
    project.write("train.py", RUNS_LOOP)
    alone = project.lint("train.py", "--diff", "--no-cache")
    assert "--- loop.py" in alone.stdout  # the script's own finding is fixed in loop.py
    result = project.lint(".", "--diff", "--no-cache")
    assert result.stdout.count("--- loop.py") == 1, result.stdout
    assert (project.root / "loop.py").read_text(encoding="utf-8") == LOOP
