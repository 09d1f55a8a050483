"""`gradguard run`: run a script or module as `python` would, with the monitor installed.

Same `sys.argv`, same `__main__`, same `sys.path[0]`, same exit code; an uncaught exception is printed
by `sys.excepthook` (the rich panel on a terminal, the plain note otherwise). With `report`, the
diagnosis is also written as JSON (`null` when nothing was diagnosed).
"""

from __future__ import annotations

import builtins
import importlib.machinery
import io
import json
import os
import runpy
import sys
import threading
import types
from pathlib import Path
from types import TracebackType
from typing import Any

from gradguard.runtime import monitor as _monitor


def _run_script(target: str) -> None:
    """Run a script file as `python target` does: `__file__` absolute, `sys.argv[0]` as given.

    (`runpy.run_path` would set `sys.argv[0]` to the path it is given; python keeps what the user
    typed and makes only `__file__` absolute.)
    """
    path = os.path.abspath(target)
    with io.open_code(path) as handle:
        source = handle.read()
    code = compile(source, path, "exec", dont_inherit=True)
    main = types.ModuleType("__main__")
    main.__dict__.update(
        __file__=path,
        __cached__=None,
        __package__=None,
        __spec__=None,
        __loader__=importlib.machinery.SourceFileLoader("__main__", path),
        __builtins__=builtins,
    )
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = main
    try:
        exec(code, main.__dict__)  # noqa: S102 - running the user's program is the point
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved


def _exit_code(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _user_traceback(tb: TracebackType | None) -> TracebackType | None:
    """Drop the runner's and runpy's own frames from the top of a traceback."""
    while tb is not None and tb.tb_frame.f_globals.get("__name__") in (__name__, "runpy"):
        tb = tb.tb_next
    return tb


def _print_uncaught(exc: BaseException) -> None:
    """Print an uncaught exception through `sys.excepthook`, starting at the program's own frame.

    The default hook prints the exception's own `__traceback__`, so the runner's frames are dropped
    from it (the exception is not used by anything else any more).
    """
    exc.__traceback__ = _user_traceback(exc.__traceback__)
    sys.excepthook(type(exc), exc, exc.__traceback__)


def _write_report(path: str, diagnosis: Any) -> bool:
    payload = json.dumps(diagnosis.to_json() if diagnosis is not None else None, indent=2) + "\n"
    target = Path(path)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(payload, encoding="utf-8")
        os.replace(temporary, target)
    except OSError as exc:
        print(f"gradguard run: cannot write the report to {path}: {exc.strerror or exc}", file=sys.stderr)
        try:
            temporary.unlink()
        except OSError:
            pass
        return False
    return True


def _wait_for_threads() -> None:
    """Join non-daemon threads, as the interpreter does before it exits."""
    main = threading.main_thread()
    for thread in threading.enumerate():
        if thread is not main and thread is not threading.current_thread() and not thread.daemon:
            thread.join()


def _locate(target: str, module: bool) -> tuple[str | None, int]:
    """An error message and exit code when the target cannot be run, like python's own."""
    if module:
        import importlib.util

        try:
            spec = importlib.util.find_spec(target)
        except (ImportError, ValueError) as exc:
            return f"gradguard run: Error while finding module specification for {target!r} ({exc})", 1
        if spec is None:
            return f"gradguard run: No module named {target}", 1
        return None, 0
    if not os.path.exists(target):
        return f"gradguard run: can't open file {os.path.abspath(target)!r}: [Errno 2] No such file or directory", 2
    return None, 0


def _write_html(path: str, diagnosis: Any) -> bool:
    from gradguard.runtime.picture import html_report

    page = html_report(diagnosis) if diagnosis is not None else "<!DOCTYPE html>\n<p>gradguard: no autograd error</p>\n"
    try:
        Path(path).write_text(page, encoding="utf-8")
    except OSError as exc:
        print(f"gradguard run: cannot write the HTML report to {path}: {exc.strerror or exc}", file=sys.stderr)
        return False
    return True


def run_program(
    target: str,
    args: list[str],
    *,
    module: bool,
    report: str | None,
    deep: bool = False,
    report_html: str | None = None,
) -> int:
    """Run `target` (a script path, or a module name with `module=True`) under the monitor.

    Returns the program's exit code: 0 on success, the `SystemExit` code, 1 for an uncaught
    exception (after printing it), 130 for KeyboardInterrupt, 2 when the script cannot be opened.
    `deep=True` turns on deep mode (creation sites and held roots) for the run.
    """
    problem, code = _locate(target, module)
    if problem is not None:
        print(problem, file=sys.stderr)
        return code
    try:
        state = _monitor._acquire(explicit=False, deep=deep)
    except _monitor.MonitorUnavailable as exc:
        print(f"{exc}; running without the monitor", file=sys.stderr)
        state = None
    saved_argv = sys.argv
    saved_path0 = sys.path[0] if sys.path else None
    sys.argv = [target, *args]
    path0 = os.getcwd() if module else os.path.dirname(os.path.abspath(target))
    if sys.path:
        sys.path[0] = path0
    else:
        sys.path.append(path0)
    error: BaseException | None = None
    try:
        try:
            if module:
                runpy.run_module(target, run_name="__main__", alter_sys=True)
            elif os.path.isfile(target):
                _run_script(target)
            else:
                runpy.run_path(target, run_name="__main__")
            code = 0
        except SystemExit as exc:
            code = _exit_code(exc)
        except KeyboardInterrupt as exc:
            error = exc
            _print_uncaught(exc)
            code = 130
        except BaseException as exc:  # noqa: BLE001 - the program's own error: print it like python
            error = exc
            _print_uncaught(exc)
            code = 1
        _wait_for_threads()
        if report is not None or report_html is not None:
            diagnosis = None
            if state is not None:
                diagnosis = state.diagnosis_for(error) if error is not None else None
                diagnosis = diagnosis or state.last_diagnosis()
            if report is not None and not _write_report(report, diagnosis) and code == 0:
                code = 2
            if report_html is not None and not _write_html(report_html, diagnosis) and code == 0:
                code = 2
        return code
    finally:
        error = None
        sys.argv = saved_argv
        if saved_path0 is not None and sys.path:
            sys.path[0] = saved_path0
        if state is not None:
            _monitor._release(state, explicit=False, deep=deep)
        sys.stdout.flush()
        sys.stderr.flush()
