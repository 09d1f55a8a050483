"""A process that dies while analysing one file costs that file, not the run.

The death is real: the test hook (hooks/sitecustomize.py, loaded through PYTHONPATH into the CLI and
every worker it forks) makes the analysis of a file holding a marker line kill its own process with
SIGKILL (what the out-of-memory killer sends), `os._exit`, or a segmentation fault in native code, or
run out of memory or stack for real.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time

import pytest
from reliability_support import (
    BUGGY_ROW,
    BUGGY_SOURCE,
    CLEAN_SOURCE,
    Project,
    gradguard_command,
    hook_events,
    lines_for,
    subprocess_env,
)

from gradguard.runner import PARALLEL_MIN_BYTES, WORKER_DIED

MARKER = "# gradguard-test-die:"
HOOK = {"GG_TEST_DIE_MARKER": MARKER}


def _poison(how: str) -> str:
    return BUGGY_SOURCE + f"{MARKER} {how}\n"


def _tree(project: Project, poisoned: tuple[str, ...], *, padding: int = 0) -> list[str]:
    """Four buggy and two clean files around one poisoned file per way of dying; the buggy names."""
    pad = "".join(f"# padding line {n}\n" for n in range(padding))
    buggy = []
    for index in range(6):
        name = f"pkg/m{index}.py"
        project.write(name, (BUGGY_SOURCE if index < 4 else CLEAN_SOURCE) + pad)
        if index < 4:
            buggy.append(name)
    for how in poisoned:
        project.write(f"pkg/poison_{how}.py", _poison(how) + pad)
    return buggy


def _assert_only_the_poisoned_files_were_lost(
    output: str, buggy: list[str], poisoned: tuple[str, ...]
) -> None:
    assert "Traceback" not in output
    for how in poisoned:
        name = f"pkg/poison_{how}.py"
        assert lines_for(output, name) == [f"{name}: error: {WORKER_DIED}"], output
    for name in buggy:
        assert [line.split(" ")[:2] for line in lines_for(output, name)] == [
            [f"{name}:{BUGGY_ROW}:1:", "GG001"]
        ]
    count = len(poisoned)
    assert f"{count} file{'s' if count > 1 else ''} could not be linted." in output


def test_workers_killed_exiting_or_crashing_cost_one_file_each(project: Project) -> None:
    poisoned = ("kill", "exit", "segv")
    buggy = _tree(project, poisoned)
    log = project.root.parent / "hook.log"
    done = project.run("lint", "--no-cache", "--workers", "2", hook={**HOOK, "GG_TEST_LOG": str(log)})
    assert done.returncode == 2, done.stdout + done.stderr
    _assert_only_the_poisoned_files_were_lost(done.stdout + done.stderr, buggy, poisoned)
    assert {event["how"] for event in hook_events(log) if event["event"] == "die"} == set(poisoned)


def test_the_default_run_of_a_large_tree_survives_a_killed_worker(project: Project) -> None:
    """No `--workers`: the tree is large enough that gradguard picks worker processes itself. JSON output
    holds the file error and every finding; stderr names the file in one line."""
    buggy = _tree(project, ("kill",), padding=PARALLEL_MIN_BYTES // 7 // 18 + 50)
    done = project.run("lint", "--no-cache", "--output-format", "json", hook=HOOK)
    assert done.returncode == 2, done.stderr
    entries = json.loads(done.stdout)
    errors = [(e["filename"].rsplit("/", 1)[-1], e["message"]) for e in entries if e["code"] == "file-error"]
    assert errors == [("poison_kill.py", WORKER_DIED)]
    assert sorted(e["filename"].rsplit("/", 2)[-2:] for e in entries if e["code"] == "GG001") == sorted(
        name.split("/") for name in buggy
    )
    assert done.stderr.splitlines() == [f"pkg/poison_kill.py: error: {WORKER_DIED}"]


def test_a_worker_killed_while_fixing_leaves_that_file_as_it_was(project: Project) -> None:
    buggy = _tree(project, ("kill",))
    done = project.run("lint", "--no-cache", "--workers", "2", "--fix", "--unsafe-fixes", hook=HOOK)
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert lines_for(output, "pkg/poison_kill.py") == [f"pkg/poison_kill.py: error: {WORKER_DIED}"]
    assert (project.root / "pkg/poison_kill.py").read_text(encoding="utf-8") == _poison("kill")
    for name in buggy:
        assert (project.root / name).read_text(encoding="utf-8") != BUGGY_SOURCE, name
    assert f"({len(buggy)} fixed, 0 remaining)." in done.stdout


def test_running_out_of_memory_or_stack_in_the_analysis_costs_one_file(project: Project) -> None:
    """A real MemoryError (under an address-space limit) and a real RecursionError inside the analysis,
    in the default serial run: each of those files gets one line, the others are linted."""
    project.write("train.py", BUGGY_SOURCE)
    project.write("poison_memory.py", _poison("memory"))
    project.write("poison_recursion.py", _poison("recursion"))
    done = project.run("lint", "--no-cache", hook=HOOK)
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "Traceback" not in output
    assert lines_for(output, "poison_memory.py") == [
        "poison_memory.py: error: out of memory while analysing this file"
    ]
    assert lines_for(output, "poison_recursion.py") == [
        "poison_recursion.py: error: the code is nested too deeply to analyse"
    ]
    assert lines_for(output, "train.py")[0].startswith(f"train.py:{BUGGY_ROW}:1: GG001 ")


@pytest.mark.parametrize("target", ["process group", "main process"])
def test_ctrl_c_stops_a_parallel_run_at_once(project: Project, target: str) -> None:
    """Ctrl-C (SIGINT to the terminal's whole process group, or to gradguard alone) stops a long run
    within seconds, with one line and exit code 130, and leaves no worker behind. The pool used to finish
    every queued file first, which took as long as the run itself."""
    helpers = "".join(
        f"def step_{n}(x):\n    loss = (x * w).sum()\n    loss.backward()\n    return loss\n"
        for n in range(300)
    )
    for index in range(60):
        project.write(f"pkg/m{index}.py", BUGGY_SOURCE + helpers)
    run = subprocess.Popen(
        gradguard_command("lint", "--no-cache"),
        cwd=project.root,
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    time.sleep(2.5)
    assert run.poll() is None, "the run ended before it could be interrupted"
    interrupted = time.monotonic()
    if target == "process group":
        os.killpg(run.pid, signal.SIGINT)
    else:
        run.send_signal(signal.SIGINT)
    try:
        stdout, stderr = run.communicate(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
    assert time.monotonic() - interrupted < 15
    assert (run.returncode, stderr) == (130, "gradguard: interrupted\n"), stderr
    assert stdout == ""
    left = subprocess.run(["pgrep", "-g", str(run.pid)], capture_output=True, text=True, check=False).stdout
    assert left == "", "a worker outlived the run"
