"""Worker processes: the same results as a serial run, and a worker that dies costs one file, not the run."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from cli_support import GG001_ROW, GG001_SOURCE, Project

from gradguard.config import Selection
from gradguard.fixes import FixOutcome
from gradguard.runner import WORKER_DIED, Job, run_job, run_pool


def test_parallel_run_matches_the_serial_one(project: Project) -> None:
    for index in range(24):
        body = (
            GG001_SOURCE
            if index % 3 == 0
            else GG001_SOURCE.replace("loss.backward()\nloss.backward()", "loss.backward()")
        )
        project.write(f"pkg/m{index:02}.py", body + "\n".join(f"# padding {n}" for n in range(200)) + "\n")
    serial = project.lint("--no-cache", "--workers", "1")
    parallel = project.lint("--no-cache", "--workers", "2")
    assert serial.exit_code == parallel.exit_code == 1
    assert serial.output == parallel.output
    flagged = [line for line in parallel.output.splitlines() if "GG001" in line]
    assert [line.split(":")[:2] for line in flagged] == [
        [f"pkg/m{i:02}.py", str(GG001_ROW)] for i in range(0, 24, 3)
    ]


def _die_on_poison(job: Job) -> FixOutcome:
    """A worker that is killed (as by the OOM killer) on one file and works normally on the others."""
    if job.path.endswith("poison.py"):
        os.kill(os.getpid(), signal.SIGKILL)
    return run_job(job)


def test_a_killed_worker_costs_one_file(tmp_path: Path) -> None:
    names = [f"f{index}.py" for index in range(6)] + ["poison.py"] + [f"g{index}.py" for index in range(6)]
    jobs = [
        Job(
            index=index,
            path=str(tmp_path / name),
            text="import torch\nx = torch.ones(1, requires_grad=True)\nx.sum().backward()\n",
            encoding="utf-8",
            notebook=False,
            selection=Selection(select=("GG",), ignore=()),
            key=None,
            original_digest="",
            mode=None,
            cache_root=None,
            markers=None,
        )
        for index, name in enumerate(names)
    ]
    outcomes: dict[str, FixOutcome] = {}
    run_pool(
        jobs,
        2,
        lambda job, outcome: outcomes.__setitem__(os.path.basename(job.path), outcome),
        _die_on_poison,
    )
    assert sorted(outcomes) == sorted(names)
    assert outcomes["poison.py"].result.errors[0].message == WORKER_DIED
    for name in names:
        if name != "poison.py":
            assert outcomes[name].result.errors == (), name
