"""The real-code bench reads a pinned commit from a bare mirror, lints the named files, reports them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench" / "bench_realcode.py"

BUGGY = """\
import torch
from torch import nn

model = nn.Linear(4, 1)
for step in range(3):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    loss.backward()
    loss.backward()
"""


def git(*args: str, cwd: Path) -> str:
    """Run git quietly with a fixed identity; its stdout."""
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def make_mirror(root: Path) -> str:
    """A bare mirror `owner+tiny/repo` whose first commit has the buggy script; the second removes it."""
    work = root / "work"
    (work / "train").mkdir(parents=True)
    (work / "train" / "buggy.py").write_text(BUGGY)
    (work / "tests").mkdir()
    (work / "tests" / "test_buggy.py").write_text(BUGGY)
    (work / "data.bin").write_bytes(b"\0" * 16)
    git("init", "-q", cwd=work)
    git("add", ".", cwd=work)
    git("commit", "-qm", "one", cwd=work)
    pinned = git("rev-parse", "HEAD", cwd=work)
    git("rm", "-rq", "train", cwd=work)
    git("commit", "-qm", "two", cwd=work)
    git("clone", "-q", "--bare", str(work), str(root / "mirrors" / "owner+tiny" / "repo"), cwd=root)
    return pinned


def test_bench_lints_the_pinned_commit_and_names_missing_mirrors(tmp_path: Path) -> None:
    pinned = make_mirror(tmp_path)
    config = tmp_path / "corpus.toml"
    config.write_text(
        '[defaults]\nexclude = ["tests/*"]\n\n'
        f'[[repo]]\nname = "owner/tiny"\nfamily = "toy"\ncommit = "{pinned}"\n\n'
        '[[repo]]\nname = "owner/absent"\ncommit = "0000000000000000000000000000000000000000"\n'
    )
    found = tmp_path / "found.json"
    done = subprocess.run(
        [sys.executable, str(BENCH), "--config", str(config), "--mirrors", str(tmp_path / "mirrors"),
         "--json", str(found)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| owner/tiny | toy | 1 | 1 | 0 | 0 |" in done.stdout
    assert "| owner/tiny | train/buggy.py:8 | GG001 |" in done.stdout
    assert "- github:owner/absent (no mirror;" in done.stdout
    [tiny, absent] = json.loads(found.read_text())
    assert [f["filename"] for f in tiny["findings"]] == ["train/buggy.py"]
    assert absent["problem"] == "no mirror"


def test_a_source_blob_the_snapshot_lacks_is_left_out_not_fatal(tmp_path: Path) -> None:
    """A `fetch` snapshot may lack the blob of a large notebook: the other files are still linted."""
    sys.path.insert(0, str(REPO / "bench"))
    import bench_realcode

    work = tmp_path / "work"
    work.mkdir()
    (work / "train.py").write_text(BUGGY)
    (work / "big.ipynb").write_text('{"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": {}}')
    git("init", "-q", cwd=work)
    git("add", ".", cwd=work)
    git("commit", "-qm", "one", cwd=work)
    pinned = git("rev-parse", "HEAD", cwd=work)
    mirror = tmp_path / "mirror.git"
    git("clone", "-q", "--bare", "--no-local", str(work), str(mirror), cwd=tmp_path)
    # A clone packs its objects: unpack them loose, then remove the notebook's blob.
    for pack in list((mirror / "objects" / "pack").glob("*.pack")):
        moved = tmp_path / pack.name
        pack.rename(moved)
        pack.with_suffix(".idx").unlink()
        with moved.open("rb") as stream:
            subprocess.run(["git", "--git-dir", str(mirror), "unpack-objects", "-q"], stdin=stream, check=True)
    blob = git("--git-dir", str(mirror), "rev-parse", f"{pinned}:big.ipynb", cwd=tmp_path)
    (mirror / "objects" / blob[:2] / blob[2:]).unlink()
    into = tmp_path / "tree"
    bench_realcode.materialise(mirror, pinned, into)
    assert (into / "train.py").read_text() == BUGGY
    assert not (into / "big.ipynb").exists()
