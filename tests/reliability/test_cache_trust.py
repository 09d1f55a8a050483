"""The cache verifies what it serves (issue 12, item 8, and issue 11's index): a bit flipped anywhere in
an entry or in the index is never served, an entry of other code or other settings is never served, the
index spares reading unchanged files and is invalid as soon as a file or one of its dependencies changes.
Every warm output is compared with a `--no-cache` run byte for byte."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from reliability_support import (
    BUGGY_SOURCE,
    CLEAN_SOURCE,
    REPO,
    Project,
    subprocess_env,
)

import gradguard.runner
from gradguard.cache import CACHE_DIR, INDEX, Cache
from gradguard.cli import main
from gradguard.config import Resolver
from gradguard.model import FileResult

FLIPS = 60


def _backdate(root: Path, seconds: float = 60) -> None:
    """Give every file an mtime a minute old, so that the index may record it (see cache.is_racy)."""
    past = time.time() - seconds
    for path in root.rglob("*"):
        if path.is_file() and CACHE_DIR not in path.parts:
            os.utime(path, (past, past))


def _tree(project: Project) -> None:
    for index in range(4):
        source = BUGGY_SOURCE if index % 2 == 0 else CLEAN_SOURCE
        project.write(f"pkg/m{index}.py", source.replace("w * 2", f"w * {index + 5}"))
    project.write(
        "nb.ipynb",
        json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": BUGGY_SOURCE}]}),
    )
    project.write("util.py", "def helper():\n    return 1\n")
    _backdate(project.root)


def _lint(project: Project, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str]:
    monkeypatch.chdir(project.root)
    result = CliRunner().invoke(main, ["lint", "--output-format", "json", *args], catch_exceptions=False)
    return result.exit_code, result.output


def _cache_files(root: Path) -> list[Path]:
    folder = root / CACHE_DIR
    return sorted([*folder.glob("*/*.json"), folder / INDEX])


def test_a_bit_flipped_anywhere_in_the_cache_is_never_served(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(project)
    reference = _lint(project, monkeypatch, "--no-cache")
    assert reference[0] == 1
    assert _lint(project, monkeypatch) == reference
    files = _cache_files(project.root)
    assert len(files) == 6 and files[-1].exists(), "five entries (the prefilter skips util.py), the index"
    pristine = {path: path.read_bytes() for path in files}
    rng = random.Random(12)
    for _ in range(FLIPS):
        path = rng.choice(files)
        data = bytearray(pristine[path])
        # Flip a bit of a digit or a letter inside the JSON, where it keeps the JSON valid most often.
        spots = [i for i, byte in enumerate(data) if chr(byte).isalnum()]
        spot = rng.choice(spots)
        data[spot] ^= 1 << rng.choice([0, 1, 2])
        path.write_bytes(bytes(data))
        assert _lint(project, monkeypatch) == reference, (path.name, spot)
        for item, content in pristine.items():
            item.write_bytes(content)


def test_an_entry_of_other_code_is_never_served(project: Project, tmp_path: Path) -> None:
    """A copy of gradguard, then the same copy with one rule module edited: the second run's keys are new
    (a checkout edited in place never serves what the code it replaced computed)."""
    copy = tmp_path / "copy"
    shutil.copytree(REPO / "gradguard", copy / "gradguard", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "rules", copy / "rules")
    _tree(project)

    def run() -> tuple[str, set[str]]:
        env = subprocess_env({"PYTHONPATH": str(copy)})
        done = subprocess.run(
            ["python", "-P", "-m", "gradguard", "lint", "--output-format", "json"],
            cwd=project.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 1, done.stderr
        return done.stdout, {path.stem for path in (project.root / CACHE_DIR).glob("*/*.json")}

    first, keys = run()
    rule = next((copy / "gradguard" / "rules").glob("gg001_*.py"))
    rule.write_text(rule.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    second, new_keys = run()
    assert second == first
    assert len(new_keys) == 2 * len(keys), "every entry was computed again, under new keys"
    document = next((copy / "rules").glob("GG001*.md"))
    document.write_text(document.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    _, newest = run()
    assert len(newest) == 3 * len(keys)


class _Counting:
    """Stands in for the runner's `read_bytes` and `analyse`, counting calls per file name."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, dependency: Path | None = None) -> None:
        self.reads: list[str] = []
        self.analysed: list[str] = []
        read, analyse = gradguard.runner.read_bytes, gradguard.runner.analyse

        def counted_read(path: str) -> bytes:
            self.reads.append(Path(path).name)
            return read(path)

        def counted_analyse(prepared, selection):  # type: ignore[no-untyped-def]
            self.analysed.append(Path(prepared.path).name)
            result: FileResult = analyse(prepared, selection)
            if dependency is not None:
                result = FileResult(
                    result.path,
                    result.diagnostics,
                    result.errors,
                    result.source,
                    result.skipped,
                    result.cells,
                    dependencies=(str(dependency),),
                )
            return result

        monkeypatch.setattr(gradguard.runner, "read_bytes", counted_read)
        monkeypatch.setattr(gradguard.runner, "analyse", counted_analyse)

    def run(self, project: Project, files: list[str]) -> list[FileResult]:
        self.reads.clear()
        self.analysed.clear()
        paths = [str(project.root / name) for name in files]
        outcomes = gradguard.runner.lint_files(
            paths, Resolver(project.root), cache=Cache(project.root), workers=1
        )
        return [outcome.result for outcome in outcomes]


def _strip(results: list[FileResult]) -> list[tuple[object, ...]]:
    return [(r.path, r.diagnostics, r.errors, r.skipped) for r in results]


def test_the_index_spares_reading_unchanged_files_and_sees_every_change(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = ["bug.py", "clean.py", "plain.py"]
    project.write("bug.py", BUGGY_SOURCE)
    clean = project.write("clean.py", CLEAN_SOURCE)
    project.write("plain.py", "def helper():\n    return 1\n")
    _backdate(project.root)
    counting = _Counting(monkeypatch)
    cold = counting.run(project, names)
    assert sorted(counting.reads) == names and sorted(counting.analysed) == ["bug.py", "clean.py"]
    warm = counting.run(project, names)
    assert _strip(warm) == _strip(cold)
    assert counting.reads == ["bug.py"], "only the file whose excerpt is shown is read"
    assert counting.analysed == []
    # Same size, the mtime put back (as `cp -p` does): the ctime still tells.
    info = clean.stat()
    replacement = BUGGY_SOURCE.replace("w * 2", "w * 3")[: info.st_size].ljust(info.st_size)
    clean.write_text(replacement, encoding="utf-8")
    assert clean.stat().st_size == info.st_size
    os.utime(clean, ns=(info.st_atime_ns, info.st_mtime_ns))
    changed = counting.run(project, names)
    assert counting.analysed == ["clean.py"]
    assert _strip(changed) != _strip(cold)


def test_a_racily_fresh_file_is_not_indexed(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    project.write("clean.py", CLEAN_SOURCE)  # written just now: its mtime proves nothing yet
    counting = _Counting(monkeypatch)
    counting.run(project, ["clean.py"])
    counting.run(project, ["clean.py"])
    assert counting.reads == ["clean.py"] and counting.analysed == [], "read again, served by its content"


def test_a_result_is_served_only_while_its_dependencies_are_unchanged(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = project.write("models.py", "class Net:\n    pass\n")
    project.write("train.py", CLEAN_SOURCE)
    _backdate(project.root)
    counting = _Counting(monkeypatch, dependency=models)
    first = counting.run(project, ["train.py"])
    assert counting.analysed == ["train.py"]
    assert first[0].dependencies == (str(models),)
    counting.run(project, ["train.py"])
    assert counting.analysed == [] and counting.reads == [], "index hit: nothing read"
    # Touched, same content: the index no longer vouches, the entry still does (by content hash).
    os.utime(models, (time.time() - 30, time.time() - 30))
    served = counting.run(project, ["train.py"])
    assert counting.analysed == [] and served[0].dependencies == (str(models),)
    # Changed: analysed again.
    models.write_text("class Net:\n    layers = 2\n", encoding="utf-8")
    _backdate(project.root)
    counting.run(project, ["train.py"])
    assert counting.analysed == ["train.py"]
    counting.run(project, ["train.py"])
    assert counting.analysed == []
    # Gone: analysed again.
    models.unlink()
    counting.run(project, ["train.py"])
    assert counting.analysed == ["train.py"]


def test_runs_started_together_with_the_index_print_what_no_cache_prints(project: Project) -> None:
    _tree(project)
    command = ["python", "-P", "-m", "gradguard", "lint", "--output-format", "json"]

    def together(*extra: str, count: int = 3) -> list[tuple[int, str]]:
        runs = [
            subprocess.Popen(
                [*command, *extra],
                cwd=project.root,
                env=subprocess_env(),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for _ in range(count)
        ]
        return [(run.wait(timeout=300), run.stdout.read()) for run in runs if run.stdout is not None]

    (reference,) = together("--no-cache", count=1)
    for round_ in range(3):  # cold, warm, then with the index truncated
        if round_ == 2:
            index = project.root / CACHE_DIR / INDEX
            index.write_bytes(index.read_bytes()[:100])
        assert together() == [reference] * 3, round_
    assert not list((project.root / CACHE_DIR).glob(".tmp-*"))
