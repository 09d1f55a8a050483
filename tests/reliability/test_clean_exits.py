"""Clean exits (issue 12, items 6 and 7): SIGTERM, SIGHUP and SIGKILL of the main process end its workers
within seconds, and a temporary file a kill leaves during `--fix` is recognised and removed by the next
run."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from reliability_support import (
    BUGGY_SOURCE,
    Project,
    gradguard_command,
    hook_events,
    subprocess_env,
)

from gradguard.fixes import LEFTOVER_AGE_S, TEMP_SUFFIX, remove_leftover_temps

SLOW = BUGGY_SOURCE + "#GG-DIE sleep\n"


def _running(pid: int) -> bool:
    """True while the process exists and is not a zombie (a container's pid 1 may never reap it)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _wait_for(condition, timeout: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
def test_a_signal_to_the_main_process_ends_its_workers(project: Project, signum: int) -> None:
    for index in range(2):
        project.write(f"slow{index}.py", SLOW.replace("w * 2", f"w * {index + 2}"))
    log = project.root.parent / "events.jsonl"
    main = subprocess.Popen(
        gradguard_command("lint", "--no-cache", "--workers", "2", "."),
        cwd=project.root,
        env=subprocess_env({"GG_TEST_DIE_MARKER": "#GG-DIE", "GG_TEST_LOG": str(log)}, hooked=True),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert _wait_for(lambda: len(hook_events(log)) == 2, 60), "the workers never started"
        workers = [int(event["pid"]) for event in hook_events(log)]
        assert main.pid not in workers
        main.send_signal(signum)
        _, stderr = main.communicate(timeout=15)
        assert _wait_for(lambda: not any(_running(pid) for pid in workers), 10), "a worker outlived the run"
    finally:
        main.kill()
        main.wait()
    if signum == signal.SIGKILL:
        assert main.returncode == -signal.SIGKILL
    else:
        assert main.returncode == 128 + signum, stderr
        assert f"gradguard: stopped by {signal.Signals(signum).name}" in stderr
        assert "Traceback" not in stderr


def test_a_kill_mid_fix_leaves_a_temporary_file_the_next_run_removes(project: Project) -> None:
    target = project.write("train.py", BUGGY_SOURCE)
    killed = project.run(
        "lint", "--no-cache", "--fix", "--unsafe-fixes", hook={"GG_TEST_KILL_ON_REPLACE": "1"}
    )
    assert killed.returncode == -signal.SIGKILL
    assert target.read_text(encoding="utf-8") == BUGGY_SOURCE
    (leftover,) = [path for path in project.root.iterdir() if path.name.endswith(TEMP_SUFFIX)]
    assert leftover.name.startswith(".train.py.")
    again = project.run("lint", "--no-cache", "--fix", "--unsafe-fixes")
    assert again.returncode == 0, again.stdout + again.stderr
    assert not leftover.exists()
    assert target.read_text(encoding="utf-8") != BUGGY_SOURCE
    assert [path.name for path in project.root.iterdir() if path.name.startswith(".")] == []


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_leftovers_are_told_from_files_a_live_run_is_writing(tmp_path: Path) -> None:
    live = tmp_path / f".a.py.{os.getpid()}.x1{TEMP_SUFFIX}"
    dead = tmp_path / f".a.py.{_dead_pid()}.x2{TEMP_SUFFIX}"
    legacy_new = tmp_path / f".a.py.abc{TEMP_SUFFIX}"
    legacy_old = tmp_path / f".b.py.def{TEMP_SUFFIX}"
    live_but_old = tmp_path / f".b.py.{os.getpid()}.x3{TEMP_SUFFIX}"
    other = tmp_path / "notes.gradguard"
    for path in (live, dead, legacy_new, legacy_old, live_but_old, other):
        path.write_text("x", encoding="utf-8")
    past = time.time() - LEFTOVER_AGE_S - 10
    for path in (legacy_old, live_but_old):
        os.utime(path, (past, past))
    assert remove_leftover_temps(str(tmp_path), "a.py") == [str(dead)]
    assert sorted(remove_leftover_temps(str(tmp_path))) == sorted([str(legacy_old), str(live_but_old)])
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        [live.name, legacy_new.name, other.name]
    )
