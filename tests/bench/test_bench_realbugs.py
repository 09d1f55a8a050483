"""The real-bug bench: the manifest is well formed, and the bench runs end to end on a local mirror."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import bench_realbugs  # noqa: E402

SHA = re.compile(r"^[0-9a-f]{40}$")

BUGGY = """\
import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    loss.backward()
    loss.backward()
    optimizer.step()
"""
FIXED = BUGGY.replace("    loss.backward()\n    loss.backward()\n", "    loss.backward()\n")


def test_manifest_entries_are_well_formed() -> None:
    bugs = bench_realbugs.load_manifest(bench_realbugs.MANIFEST)
    assert len(bugs) >= 25
    assert len({b.id for b in bugs}) == len(bugs)
    for bug in bugs:
        assert SHA.match(bug.buggy) and SHA.match(bug.fix), bug.id
        assert bug.buggy != bug.fix, bug.id
        assert bug.lint in bug.files, bug.id
        assert bug.failing.path in bug.files, bug.id
        if bug.failing.path != bug.lint:
            assert any(site.path == bug.lint for site in bug.call_sites), bug.id


def test_location_parses_files_and_notebook_cells() -> None:
    assert bench_realbugs.Location.parse("a/b.py:12") == bench_realbugs.Location("a/b.py", 12)
    assert bench_realbugs.Location.parse("n.ipynb:cell 13:177") == bench_realbugs.Location("n.ipynb", 177, 13)


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        capture_output=True, text=True, check=True,
    )
    return done.stdout.strip()


@pytest.fixture()
def mirror(tmp_path: Path) -> tuple[Path, str, str]:
    """A mirror folder holding one repository with a buggy commit and its fix."""
    work = tmp_path / "mirror" / "someone+demo" / "repo"
    work.mkdir(parents=True)
    git(work, "init", "-q")
    (work / "train.py").write_text(BUGGY, encoding="utf-8")
    git(work, "add", "train.py")
    git(work, "commit", "-qm", "buggy")
    buggy = git(work, "rev-parse", "HEAD")
    (work / "train.py").write_text(FIXED, encoding="utf-8")
    git(work, "commit", "-qam", "fix")
    return tmp_path / "mirror", buggy, git(work, "rev-parse", "HEAD")


def test_bench_finds_the_bug_and_skips_missing_mirrors(
    mirror: tuple[Path, str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, buggy, fix = mirror
    manifest = tmp_path / "bugs.toml"
    entry = """
[[bug]]
id = "{id}"
repo = "{repo}"
buggy = "{buggy}"
fix = "{fix}"
lint = "train.py"
failing = "train.py:9"
files = ["train.py"]
family = "repeated-backward"
cause = "The same loss is backward-ed twice."
fix_summary = "Backward once."
"""
    manifest.write_text(
        entry.format(id="demo", repo="someone/demo", buggy=buggy, fix=fix)
        + entry.format(id="absent", repo="someone/absent", buggy=buggy, fix=fix),
        encoding="utf-8",
    )
    out = tmp_path / "out.json"
    code = bench_realbugs.main(["--manifest", str(manifest), "--mirror", str(root), "--json", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    rows = {row["id"]: row for row in json.loads(out.read_text(encoding="utf-8"))}
    assert rows["demo"]["verdict"] == "line"
    assert rows["demo"]["fix_errors"] == []
    assert rows["absent"]["verdict"] == "skipped"
    assert "fetch github:someone/absent" in printed
    assert "single-file 1/1 (100%)" in printed
