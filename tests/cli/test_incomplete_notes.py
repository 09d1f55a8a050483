"""A part of a file the analysis did not follow to the end is a note in every output format, at the
row where that part starts, counted by `--statistics`, kept by the cache, and never a failure: the
findings of the rest of the file are all there and the exit code is theirs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import Project

from gradguard.analysis.program import Program
from gradguard.config import OUTPUT_FORMATS

SOURCE = """\
import torch

w = torch.randn(3, requires_grad=True)


def costly(data):
    x = w * 1
    for a in data:
        for b in data:
            for c in data:
                if a:
                    x = x * 2
                elif b:
                    x = torch.tanh(x)
                if c:
                    x = x.detach()
    return x


def train():
    loss = (w * 2).sum()
    loss.backward()
    loss.backward()
"""
LOOP_ROW = 8
BACKWARD_ROW = 23
MESSAGE = "analysis incomplete in costly(): step budget exhausted"


@pytest.fixture
def small_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A budget `costly` uses up at once (the CLI runs in this process with `--workers 1`)."""
    monkeypatch.setattr(Program, "max_steps", 40)
    monkeypatch.setattr(Program, "steps_per_line", 0)


@pytest.mark.parametrize("fmt", OUTPUT_FORMATS)
def test_every_format_shows_the_note(project: Project, small_budget: None, fmt: str) -> None:
    project.write("train.py", SOURCE)
    result = project.lint("--no-cache", "--workers", "1", "--output-format", fmt, "train.py")
    assert result.exit_code == 1, result.output  # the GG001 of train(), not the note
    assert f"train.py:{LOOP_ROW}: note: {MESSAGE}" in result.stderr
    if fmt not in ("concise", "full"):
        assert MESSAGE in result.stdout
    if fmt == "json":
        entries = json.loads(result.stdout)
        assert [(e["code"], e["location"]["row"], e["severity"]) for e in entries] == [
            ("GG001", BACKWARD_ROW, "error"), ("analysis-incomplete", LOOP_ROW, "note")]
    if fmt == "sarif":
        (run,) = json.loads(result.stdout)["runs"]
        (note,) = run["invocations"][0]["toolExecutionNotifications"]
        assert note["level"] == "note" and run["invocations"][0]["executionSuccessful"] is True
        assert note["locations"][0]["physicalLocation"]["region"] == {"startLine": LOOP_ROW}
        assert [r["ruleId"] for r in run["results"]] == ["GG001"]


def test_statistics_count_the_notes(project: Project, small_budget: None) -> None:
    project.write("train.py", SOURCE)
    project.write("other.py", SOURCE.replace("def train", "def fit"))
    result = project.lint("--no-cache", "--workers", "1", "--statistics", ".")
    assert "2\t     \tanalysis-incomplete" in result.stdout.splitlines()
    assert "analysis incomplete in 2 files (2 parts)" in result.stderr


def test_the_cache_keeps_the_notes(project: Project, small_budget: None) -> None:
    project.write("train.py", SOURCE)
    cold = project.lint("--workers", "1", "--output-format", "json", "train.py")
    warm = project.lint("--workers", "1", "--output-format", "json", "train.py")
    assert any(Path(project.root, ".gradguard_cache").rglob("*.json"))
    assert warm.stdout == cold.stdout and MESSAGE in warm.stdout
    assert warm.stderr == cold.stderr


def test_quiet_keeps_the_note_out_of_stderr_but_not_out_of_the_report(project: Project, small_budget: None) -> None:
    project.write("train.py", SOURCE)
    result = project.lint("--no-cache", "--workers", "1", "--quiet", "--output-format", "pylint", "train.py")
    assert "note:" not in result.stderr
    assert f"train.py:{LOOP_ROW}: [analysis-incomplete] {MESSAGE}" in result.stdout.splitlines()
