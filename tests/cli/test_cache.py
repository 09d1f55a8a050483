"""The content-hash cache: warm runs read it, `--no-cache` bypasses it, broken entries are rebuilt,
concurrent runs never tear it, and a warm run does not load the parser."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_support import (
    GG001_ROW,
    GG001_SOURCE,
    NO_TORCH_SOURCE,
    Project,
    subprocess_env,
)

import gradguard
from gradguard import __version__
from gradguard import cache as cache_module
from gradguard.cache import CACHE_DIR, INDEX, Cache, checksum, entry_key


def _entries(root: Path) -> list[Path]:
    return sorted((root / ".gradguard_cache").glob("*/*.json"))


def _plant(entry: Path, message: str) -> None:
    """Rewrite a valid entry so that it reports one finding the analysis would never produce, with its
    checksum recomputed (an entry that does not verify is rebuilt: tests/reliability checks that)."""
    payload = json.loads(entry.read_text(encoding="utf-8"))
    payload["result"]["diagnostics"] = [
        {
            "code": "GG001",
            "message": message,
            "span": [[1, 1], [1, 7]],
            "severity": "error",
            "cell": None,
            "related": [],
            "related_cells": [],
            "fix": None,
        }
    ]
    payload["checksum"] = checksum([payload["key"], payload["result"], payload["dependencies"]])
    entry.write_text(json.dumps(payload), encoding="utf-8")


def test_warm_run_reads_the_cache_and_no_cache_bypasses_it(project: Project) -> None:
    project.write(
        "train.py", "import torch\nloss = torch.ones(1, requires_grad=True).sum()\nloss.backward()\n"
    )
    project.write("util.py", NO_TORCH_SOURCE)
    first = project.lint()
    assert first.exit_code == 0, first.output
    entries = _entries(project.root)
    assert len(entries) == 1, "only files that pass the prefilter are analysed and cached"
    assert (project.root / ".gradguard_cache" / ".gitignore").read_text(encoding="utf-8").splitlines()[
        -1
    ] == "*"
    _plant(entries[0], "planted in the cache")
    warm = project.lint()
    assert "train.py:1:1: GG001 planted in the cache" in warm.output
    assert warm.exit_code == 1
    cold = project.lint("--no-cache")
    assert "planted" not in cold.output
    assert cold.exit_code == 0


def test_no_cache_writes_nothing(project: Project) -> None:
    project.write("train.py", GG001_SOURCE)
    project.lint("--no-cache")
    assert not (project.root / ".gradguard_cache").exists()


def test_changed_file_or_selection_misses(project: Project) -> None:
    path = project.write(
        "train.py", "import torch\nx = torch.ones(1, requires_grad=True)\nx.sum().backward()\n"
    )
    project.lint()
    (entry,) = _entries(project.root)
    _plant(entry, "planted in the cache")
    path.write_text(path.read_text() + "# edited\n", encoding="utf-8")
    assert "planted" not in project.lint().output
    path.write_text(path.read_text().replace("# edited\n", ""), encoding="utf-8")
    assert "planted" in project.lint().output
    project.write("pyproject.toml", "[tool.gradguard]\nignore = ['GG001']\n")
    changed = project.lint()
    assert changed.exit_code == 0, changed.output
    assert "planted" not in changed.output


def test_corrupt_truncated_and_foreign_entries_are_rebuilt(project: Project) -> None:
    project.write("train.py", GG001_SOURCE)
    expected = f"train.py:{GG001_ROW}:"
    project.lint()
    (entry,) = _entries(project.root)
    good = entry.read_text(encoding="utf-8")
    foreign = json.dumps(json.loads(good) | {"version": "0.0.0-other"})
    for broken in (good[: len(good) // 2], "\x00\x01garbage", "[]", foreign):
        entry.write_text(broken, encoding="utf-8")
        result = project.lint()
        assert result.exit_code == 1, result.output
        assert expected in result.output
        rebuilt = json.loads(entry.read_text(encoding="utf-8"))
        assert rebuilt["version"] == __version__


def test_concurrent_runs_leave_valid_entries(project: Project) -> None:
    for index in range(40):
        project.write(f"pkg/m{index}.py", GG001_SOURCE.replace("w *", f"w * {index} *"))
    command = [sys.executable, "-m", "gradguard", "lint", "--exit-zero", "--output-format", "json"]
    runs = [
        subprocess.Popen(
            command,
            cwd=project.root,
            env=subprocess_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outputs = [run.communicate(timeout=300) for run in runs]
    for run, (stdout, stderr) in zip(runs, outputs, strict=True):
        assert run.returncode == 0, stderr
        assert len(json.loads(stdout)) == 40
    entries = _entries(project.root)
    assert len(entries) == 40
    for entry in entries:
        assert json.loads(entry.read_text(encoding="utf-8"))["version"] == __version__
    assert not list((project.root / ".gradguard_cache").glob("*/.tmp-*"))


def test_warm_run_does_not_import_the_parser(project: Project) -> None:
    """Nor rich (the concise format writes its own colours) nor the analysis's API facts."""
    project.write("train.py", GG001_SOURCE)
    project.write("util.py", NO_TORCH_SOURCE)
    project.write("notes.ipynb", json.dumps({"cells": [{"cell_type": "code", "source": ["x = 1\n"]}]}))
    heavy = ("libcst", "rich", "gradguard.analysis.api")
    probe = (
        "import atexit, sys, runpy\n"
        f"atexit.register(lambda: print(' '.join(m for m in {heavy!r} if m in sys.modules) or 'NO-PARSER',"
        " file=sys.stderr))\n"
        "sys.argv = ['gradguard', 'lint', '.']\n"
        "runpy.run_module('gradguard', run_name='__main__')\n"
    )

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", probe],
            cwd=project.root,
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )

    cold = run()
    assert cold.returncode == 1, cold.stdout + cold.stderr
    warm = run()
    assert warm.returncode == 1, warm.stdout + warm.stderr
    assert f"train.py:{GG001_ROW}:" in warm.stdout
    assert warm.stderr.strip().splitlines()[-1] == "NO-PARSER"


ACCUMULATING_SCRIPT = """\
import torch
from helpers import update

w = torch.ones(3, requires_grad=True)
total = torch.zeros(1)
for step in range(3):
    loss = (w * 2).sum()
    total = total + loss
    update(total)
"""


def _age(*paths: Path) -> None:
    """Files written a minute ago: an index entry is never made for a file changed in the same instant."""
    for path in paths:
        stamp = path.stat().st_mtime - 60
        os.utime(path, (stamp, stamp))


def test_a_skipped_script_is_screened_again_when_a_module_it_imports_gains_a_backward(project: Project) -> None:
    """A script with no backward of its own is skipped while its helper runs none; the skip depends on
    the helper's module, so the warm run after the helper starts calling backward analyses it."""
    script = project.write("train.py", ACCUMULATING_SCRIPT)
    helpers = project.write("helpers.py", "def update(loss):\n    return loss\n")
    _age(script, helpers)
    first = project.lint()
    assert first.exit_code == 0, first.output
    _, _, body = (project.root / ".gradguard_cache" / "index.json").read_bytes().partition(b"\n")
    (record,) = [entry for path, entry in json.loads(body)["files"].items() if path.endswith("train.py")]
    assert record["skipped"] is True and record["dependencies"], record
    helpers.write_text("def update(loss):\n    loss.backward()\n", encoding="utf-8")
    _age(helpers)
    warm = project.lint()
    assert warm.exit_code == 1, warm.output
    assert "train.py:9:5: GG003" in warm.output


def _index_body(root: Path) -> dict:
    _, _, body = (root / CACHE_DIR / INDEX).read_bytes().partition(b"\n")
    return json.loads(body)


def _record(cache: Cache, path: Path, *dependencies: Path) -> None:
    cache.record(str(path), path.stat(), time.time_ns(), "settings", False, None, tuple(map(str, dependencies)))


def test_the_index_stores_a_shared_dependency_once_and_drops_stamps_no_record_uses(tmp_path: Path) -> None:
    """Scripts importing the same module point at one stamp of it; a changed module invalidates the
    records that point at its old stamp only, and a stamp nothing points at any more is dropped."""
    first, second, helper = (tmp_path / name for name in ("a.py", "b.py", "helper.py"))
    for path in (first, second, helper):
        path.write_text("x = 1\n", encoding="utf-8")
    _age(first, second, helper)
    cache = Cache(tmp_path)
    _record(cache, first, helper)
    _record(cache, second, helper)
    cache.save()
    body = _index_body(tmp_path)
    assert body["stamps"] == [[str(helper), helper.stat().st_size, helper.stat().st_mtime_ns]]
    assert {record["dependencies"] == [0] for record in body["files"].values()} == {True}
    warm = Cache(tmp_path)
    assert warm.lookup(str(first), first.stat(), "settings", False) is not None
    assert warm.lookup(str(second), second.stat(), "settings", False) is not None

    helper.write_text("def update(loss):\n    loss.backward()\n", encoding="utf-8")
    _age(helper)
    changed = Cache(tmp_path)
    assert changed.lookup(str(first), first.stat(), "settings", False) is None
    assert changed.lookup(str(second), second.stat(), "settings", False) is None
    _record(changed, first, helper)
    changed.save()
    assert len(_index_body(tmp_path)["stamps"]) == 2  # `second` still points at the old one
    assert Cache(tmp_path).lookup(str(first), first.stat(), "settings", False) is not None
    again = Cache(tmp_path)
    _record(again, second, helper)
    again.save()
    body = _index_body(tmp_path)
    assert body["stamps"] == [[str(helper), helper.stat().st_size, helper.stat().st_mtime_ns]]
    assert {record["dependencies"] == [0] for record in body["files"].values()} == {True}


def test_the_keys_change_with_gradguards_own_code_not_only_its_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A development install keeps its version number while its code changes: entries and the index
    are keyed by a hash of the code too, so an edited checkout never serves the old code's results."""
    copy = tmp_path / "gradguard"
    shutil.copytree(Path(gradguard.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache_module, "__file__", str(copy / "cache.py"))
    rule = copy / "rules" / "gg003_state_not_detached.py"
    try:
        cache_module.code_version.cache_clear()
        before = entry_key(b"x = 1\n", "settings", False)
        assert entry_key(b"x = 1\n", "settings", False) == before
        rule.write_text(rule.read_text(encoding="utf-8") + "\n# an edit, same version number\n", encoding="utf-8")
        cache_module.code_version.cache_clear()
        assert entry_key(b"x = 1\n", "settings", False) != before
    finally:
        monkeypatch.undo()
        cache_module.code_version.cache_clear()
