"""The lint bench runs end to end on a tiny corpus: tables, phases, findings, profile (no timing asserted)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench" / "bench_lint.py"
sys.path.insert(0, str(REPO / "bench"))

import corpus  # noqa: E402

BUGGY = """\
import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(8, 4)
    loss = model(x).pow(2).mean()
    loss.backward()
    loss.backward()
    optimizer.step()
"""

CLEAN = """\
import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    loss = model(torch.randn(8, 4)).pow(2).mean()
    loss.backward()
    optimizer.step()
"""

# Mentions backward only in prose: passes the text prefilter, stopped by the ast screen.
PROSE = '''\
"""Kept for backward compatibility."""


def shape(x):
    return x.shape
'''

UNRELATED = "def add(a, b):\n    return a + b\n"


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny"
    (folder / "pkg").mkdir(parents=True)
    (folder / "train_buggy.py").write_text(BUGGY)
    (folder / "pkg" / "train_clean.py").write_text(CLEAN)
    (folder / "pkg" / "compat.py").write_text(PROSE)
    (folder / "pkg" / "util.py").write_text(UNRELATED)
    return folder


def test_bench_runs_on_a_tiny_corpus(tiny: Path, tmp_path: Path) -> None:
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (it comes with the dev extra)")
    findings = tmp_path / "findings.json"
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            "--dir",
            f"tiny={tiny}",
            "--repeats",
            "1",
            "--no-torchfix",
            "--ruff",
            ruff,
            "--findings",
            str(findings),
            "--profile",
            "tiny",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    rows = [line for line in out.splitlines() if line.startswith("| tiny | 4 |")]
    timing_row, phase_row = rows
    assert len(timing_row.split("|")) == 15  # the thirteen columns of the timing table
    # 4 files; 3 mention backward, 2 call it: the prefilter (call shapes) and the ast screen keep those 2.
    assert phase_row.startswith("| tiny | 4 | 2 | 2 |")
    assert "Aims:" in out and "tiny: warm < 0.3 s" in out
    assert "tiny: warm within 2x of ruff's warm run" in out
    assert "start-up: `gradguard --version`" in out
    assert "tiny: 1 findings (GG001 1); 0 file errors" in out
    assert "by own time (tottime)" in out
    payload = json.loads(findings.read_text())
    [finding] = payload["tiny"]["findings"]
    assert (Path(finding["filename"]).name, finding["location"]["row"], finding["code"]) == (
        "train_buggy.py",
        10,
        "GG001",
    )
    assert payload["tiny"]["file_errors"] == []


def test_corpus_lists_python_files_and_samples_them_reproducibly(tiny: Path) -> None:
    (tiny / "pkg" / "__pycache__").mkdir()
    (tiny / "pkg" / "__pycache__" / "stale.py").write_text("x = 1\n")
    (tiny / "notes.txt").write_text("not python\n")
    found = corpus.from_folder("tiny", tiny)
    assert [path.relative_to(tiny).as_posix() for path in found.files] == [
        "pkg/compat.py",
        "pkg/train_clean.py",
        "pkg/util.py",
        "train_buggy.py",
    ]
    assert found.size == sum(path.stat().st_size for path in found.files)
    assert found.sample(2, seed=0) == found.sample(2, seed=0)
    assert len(found.sample(2, seed=0)) == 2
    assert set(found.sample(2, seed=0)) <= set(found.files)
    assert found.sample(10, seed=0) == found.files
