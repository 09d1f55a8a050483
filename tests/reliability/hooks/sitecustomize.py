"""Test hook loaded by every Python process of a reliability test run (it is on PYTHONPATH).

It changes nothing unless a GG_TEST_* variable asks for it, and then only wraps gradguard's functions
from the outside, as a fault would strike them. gradguard has no test-only code path.

- GG_TEST_DIE_MARKER: analysing a source with a line `<marker> <how>` ends the process that analyses it:
  `kill` (SIGKILL, as the out-of-memory killer does), `exit` (os._exit), `segv` (a real segmentation
  fault in native code), `sleep` (hangs for a minute, as a very slow file would), or fails it:
  `memory` (a real MemoryError under a small address-space limit),
  `recursion` (a real RecursionError).
- GG_TEST_EDIT_BEFORE_WRITE: once `--fix` has computed a file's fixes (after reading it, before writing
  it), this text is appended to the file, as an editor saving it meanwhile would.
- GG_TEST_KILL_ON_REPLACE: the process is killed just before it would `os.replace` a `.py` file (the
  moment a non-atomic writer would have left half a file).
- GG_TEST_FAIL_FSYNC: writing a file fails with ENOSPC (disk full).
- GG_TEST_NO_NETWORK: creating a socket or resolving a name raises (and is recorded).
- GG_TEST_FAIL_MARKER: a file holding a line `<marker> <stage>` makes that stage of the parent's triage
  raise (`prepare`, `prescreen`, `screen`, `entry_key`), as a bug in gradguard would.
- GG_TEST_LOG: where events are recorded, one JSON object per line.
"""

from __future__ import annotations

import errno
import json
import os
import signal


def _record(event: str, **details: object) -> None:
    log = os.environ.get("GG_TEST_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"event": event, "pid": os.getpid(), **details}) + "\n")


def _die(how: str) -> None:
    if how == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if how == "exit":
        os._exit(70)
    if how == "sleep":
        import time

        time.sleep(60)
    if how == "segv":
        import ctypes

        ctypes.string_at(0)
    if how == "memory":
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, hard))
        try:
            hog = bytearray(2 << 30)
        finally:
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        del hog
    if how == "recursion":

        def down(depth: int) -> int:
            return down(depth + 1) + 1

        down(0)


def _install_death() -> None:
    marker = os.environ["GG_TEST_DIE_MARKER"]
    import gradguard.analysis

    analyze = gradguard.analysis.analyze_file

    def analyze_or_die(source: str, *args, **kwargs):  # type: ignore[no-untyped-def]
        at = source.find(marker)
        if at >= 0:
            how = source[at + len(marker) :].split(maxsplit=1)[0]
            _record("die", how=how)
            _die(how)
        return analyze(source, *args, **kwargs)

    gradguard.analysis.analyze_file = analyze_or_die


def _install_edit_before_write() -> None:
    text = os.environ["GG_TEST_EDIT_BEFORE_WRITE"]
    import gradguard.fixes

    fix_prepared = gradguard.fixes.fix_prepared

    def fix_then_edit(prepared, *args, **kwargs):  # type: ignore[no-untyped-def]
        outcome = fix_prepared(prepared, *args, **kwargs)
        with open(prepared.path, "a", encoding="utf-8") as handle:
            handle.write(text)
        _record("edited", path=prepared.path)
        return outcome

    gradguard.fixes.fix_prepared = fix_then_edit


def _install_kill_on_replace() -> None:
    replace = os.replace

    def replace_or_die(source, target, *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(target).endswith(".py"):
            _record("killed-before-replace", target=str(target))
            os.kill(os.getpid(), signal.SIGKILL)
        return replace(source, target, *args, **kwargs)

    os.replace = replace_or_die


def _install_fail_fsync() -> None:
    def no_space(fd: int) -> None:
        _record("fsync-failed")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    os.fsync = no_space


def _install_no_network() -> None:
    import socket

    def refuse(what: str):  # type: ignore[no-untyped-def]
        def blocked(*args: object, **kwargs: object) -> object:
            _record("network", call=what)
            raise OSError(errno.ENETUNREACH, f"network blocked by the test hook ({what})")

        return blocked

    class BlockedSocket(socket.socket):
        def __init__(self, *args: object, **kwargs: object) -> None:
            _record("network", call="socket.socket")
            raise OSError(errno.ENETUNREACH, "network blocked by the test hook (socket.socket)")

    socket.socket = BlockedSocket  # type: ignore[misc]
    for name in ("create_connection", "getaddrinfo", "gethostbyname", "socketpair", "fromfd"):
        setattr(socket, name, refuse(f"socket.{name}"))


def _install_stage_failures() -> None:
    marker = os.environ["GG_TEST_FAIL_MARKER"]
    import gradguard.runner

    def failing(stage: str):  # type: ignore[no-untyped-def]
        original = getattr(gradguard.runner, stage)

        def wrapped(first, *args, **kwargs):  # type: ignore[no-untyped-def]
            text = first if isinstance(first, (bytes, str)) else getattr(first, "source", "")
            probe = f"{marker} {stage}"
            if (probe.encode() if isinstance(text, bytes) else probe) in text:
                _record("fail", stage=stage)
                raise RuntimeError(f"injected into {stage}")
            return original(first, *args, **kwargs)

        setattr(gradguard.runner, stage, wrapped)

    for stage in ("prepare", "prescreen", "screen", "entry_key"):
        failing(stage)


if os.environ.get("GG_TEST_FAIL_MARKER"):
    _install_stage_failures()
if os.environ.get("GG_TEST_DIE_MARKER"):
    _install_death()
if os.environ.get("GG_TEST_EDIT_BEFORE_WRITE"):
    _install_edit_before_write()
if os.environ.get("GG_TEST_KILL_ON_REPLACE"):
    _install_kill_on_replace()
if os.environ.get("GG_TEST_FAIL_FSYNC"):
    _install_fail_fsync()
if os.environ.get("GG_TEST_NO_NETWORK"):
    _install_no_network()
