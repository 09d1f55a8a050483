"""The cache survives anything done to it: every entry corrupted, truncated, garbled or written by another
version is ignored and rebuilt, its folder may be replaced by a file, and runs started together on the
same tree (linting, or one linting while another fixes) never tear it: a warm run always prints what a
run without the cache prints."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from reliability_support import (
    BUGGY_SOURCE,
    CLEAN_SOURCE,
    Project,
    gradguard_command,
    subprocess_env,
)

from gradguard import __version__
from gradguard.cache import CACHE_DIR, FORMAT
from gradguard.cli import main

NOTEBOOK = json.dumps(
    {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": BUGGY_SOURCE}], "metadata": {}}
)


def _tree(project: Project, size: int = 6) -> None:
    for index in range(size):
        source = BUGGY_SOURCE if index % 2 == 0 else CLEAN_SOURCE
        project.write(f"pkg/m{index}.py", source.replace("w * 2", f"w * {index + 2}"))
    project.write("notebook.ipynb", NOTEBOOK)
    project.write("broken.py", "import torch\nloss.backward(\n")
    project.write("util.py", "def helper():\n    return 1\n")


def _entries(root: Path) -> list[Path]:
    return sorted((root / CACHE_DIR).glob("*/*.json"))


def _lint(project: Project, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str]:
    monkeypatch.chdir(project.root)
    result = CliRunner().invoke(main, ["lint", *args], catch_exceptions=False)
    return result.exit_code, result.output


def _valid(entry: Path) -> bool:
    payload = json.loads(entry.read_text(encoding="utf-8"))
    return payload["version"] == __version__ and payload["format"] == FORMAT and payload["key"] == entry.stem


def _garble(field: str, value: object) -> Callable[[Path], None]:
    def change(entry: Path) -> None:
        payload = json.loads(entry.read_text(encoding="utf-8"))
        result = payload["result"]
        if field == "errors":
            result["errors"] = value
        elif result["diagnostics"]:
            result["diagnostics"][0][field] = value
        else:
            result["diagnostics"] = value
        entry.write_text(json.dumps(payload), encoding="utf-8")

    return change


def _rewrite(**changes: object) -> Callable[[Path], None]:
    def change(entry: Path) -> None:
        payload = json.loads(entry.read_text(encoding="utf-8"))
        entry.write_text(json.dumps(payload | changes), encoding="utf-8")

    return change


def _text(text: str | bytes) -> Callable[[Path], None]:
    def change(entry: Path) -> None:
        entry.write_bytes(text if isinstance(text, bytes) else text.encode())

    return change


def _truncate(entry: Path) -> None:
    data = entry.read_bytes()
    entry.write_bytes(data[: len(data) // 2])


def _directory(entry: Path) -> None:
    entry.unlink()
    entry.mkdir()
    (entry / "inner").write_text("x", encoding="utf-8")


CORRUPTIONS: dict[str, Callable[[Path], None]] = {
    "truncated": _truncate,
    "empty": _text(""),
    "garbage": _text(b"\x00\x01\xff\xfe garbage"),
    "not an object": _text("[1, 2, 3]"),
    "null": _text("null"),
    "nested 100,000 deep": _text("[" * 100_000 + "]" * 100_000),
    "another version": _rewrite(version="0.0.0-other"),
    "another format": _rewrite(format=FORMAT + 1),
    "another key": _rewrite(key="0" * 64),
    "no result": _rewrite(result=None),
    "span garbled": _garble("span", [[1]]),
    "severity garbled": _garble("severity", "fatal"),
    "cell garbled": _garble("cell", "seven"),
    "fix garbled": _garble("fix", {"message": "m"}),
    "error row garbled": _garble("errors", [["message", "row", None]]),
    "a folder instead": _directory,
}


def test_every_kind_of_corrupted_entry_is_ignored_and_rebuilt(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(project)
    reference = _lint(project, monkeypatch, "--no-cache")
    assert reference[0] == 2, reference[1]
    assert _lint(project, monkeypatch) == reference
    entries = _entries(project.root)
    assert len(entries) == 7, "one entry per analysed file (the six modules and the notebook)"
    for name, corrupt in CORRUPTIONS.items():
        for entry in entries:
            corrupt(entry)
        assert _lint(project, monkeypatch) == reference, name
        for entry in entries:
            if entry.is_dir():
                shutil.rmtree(entry)  # a cache never deletes what it did not write; the run went on
            else:
                assert _valid(entry), (name, entry)
        assert _lint(project, monkeypatch) == reference, name


@pytest.mark.parametrize("where", ["cache folder", "entry folder"])
def test_a_file_where_the_cache_keeps_its_folders_costs_nothing_but_the_cache(
    project: Project, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    _tree(project)
    reference = _lint(project, monkeypatch, "--no-cache")
    _lint(project, monkeypatch)
    target = project.root / CACHE_DIR
    if where == "entry folder":
        target = _entries(project.root)[0].parent
    shutil.rmtree(target)
    target.write_text("not a folder", encoding="utf-8")
    for _ in range(2):
        assert _lint(project, monkeypatch) == reference


def _together(project: Project, *commands: tuple[str, ...]) -> list[tuple[int, str]]:
    runs = [
        subprocess.Popen(
            gradguard_command(*args),
            cwd=project.root,
            env=subprocess_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for args in commands
    ]
    return [(run.wait(timeout=300), run.stdout.read()) for run in runs if run.stdout is not None]


@pytest.mark.slow
def test_runs_started_together_never_tear_the_cache(project: Project) -> None:
    _tree(project, size=12)
    lint = ("lint", "--output-format", "json")
    reference = _together(project, ("lint", "--no-cache", "--output-format", "json"))[0]
    assert reference[0] == 2
    for round_ in range(3):  # cold, warm, then half the entries truncated
        if round_ == 2:
            for entry in _entries(project.root)[::2]:
                _truncate(entry)
        outputs = _together(project, lint, lint)
        assert outputs == [reference, reference], f"round {round_}"
        assert all(_valid(entry) for entry in _entries(project.root))
        assert not list((project.root / CACHE_DIR).glob("*/.tmp-*")), "a temporary entry was left behind"
    # One run fixes while another lints: whatever each printed, the cache then agrees with the files.
    fixing, linting = _together(project, ("lint", "--fix", "--unsafe-fixes"), lint)
    assert fixing[0] == 2 and linting[0] == 2
    warm = _together(project, lint)[0]
    assert warm == _together(project, ("lint", "--no-cache", "--output-format", "json"))[0]
    assert all(_valid(entry) for entry in _entries(project.root))
