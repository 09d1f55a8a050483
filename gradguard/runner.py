"""Lint many files: read, prefilter and look up the cache in this process; analyse the rest in workers.

Each file is read at most once. The parent first asks the cache's index (a file whose size and times
did not change is not even read), then decodes it, runs the cheap prefilter and the cache lookup, so a
warm run starts no worker and parses nothing. What is left goes to worker processes when there is
enough of it to pay for them (serially otherwise). A worker that dies on a file (killed, out of memory,
a crash in native code) costs that file a `FileError`, not the run: the pool is rebuilt, the files that
were in flight are retried one by one in their own process, and the rest go on. Workers die with the
parent (SIGKILL included); SIGTERM and SIGHUP stop them and end the run as Ctrl-C does.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from gradguard.cache import Cache, entry_key
from gradguard.discovery import is_notebook
from gradguard.engine import (
    InputError,
    Prepared,
    analyse,
    prepare,
    prescreen,
    read_bytes,
    screen,
    syntax_error,
)
from gradguard.fixes import FixOutcome, digest, remove_leftover_temps
from gradguard.model import Applicability, FileError, FileResult
from gradguard.syntax_index import CompiledIndex

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing.context import BaseContext

    from gradguard.config import Resolver, Selection

# Below this much source to analyse, starting worker processes costs more than it saves.
PARALLEL_MIN_BYTES = 64 * 1024

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class FixMode:
    """`--fix` (write=True) or `--diff` (write=False); `unsafe` adds the unsafe fixes."""

    write: bool
    unsafe: bool = False

    def wants(self, result: FileResult) -> bool:
        """True when a result holds a fix this mode applies."""
        return any(
            d.fix is not None and (self.unsafe or d.fix.applicability is Applicability.SAFE)
            for d in result.diagnostics
        )


@dataclass(frozen=True)
class Job:
    """One file for a worker: its text travels once; the worker rebuilds a notebook's program."""

    index: int
    path: str
    text: str
    encoding: str
    notebook: bool
    selection: Selection
    key: str | None
    original_digest: str
    mode: FixMode | None
    cache_root: Path | None
    markers: str | None  # a folder where the worker notes the job it is running
    # With --fix: the files of this run (absolute), which their own jobs fix; another file's fixes
    # leave them alone.
    fixing: frozenset[str] = frozenset()


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived during a run: it stops as on Ctrl-C, once its workers are stopped."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextlib.contextmanager
def _terminating_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP raise `Terminated` in the main thread while a run lasts (a signal the caller
    ignores, as `nohup` ignores SIGHUP, stays ignored)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise Terminated(signum)

    previous = {}
    for number in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(number) is not signal.SIG_IGN:
            previous[number] = signal.signal(number, stop)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def die_with_parent(parent: int) -> None:
    """End this process when `parent` ends, however it ends (SIGKILL included).

    On Linux the kernel does it (PR_SET_PDEATHSIG); elsewhere a watchdog thread polls the parent's id.
    """
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            pr_set_pdeathsig = 1
            if ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0) == 0:
                if os.getppid() != parent:  # it died before the request was made
                    os._exit(1)
                return
        except (OSError, AttributeError):
            pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="gradguard-parent-watch", daemon=True).start()


def _worker_start(parent: int) -> None:
    """A worker's first act: the parent's signal handlers (inherited by fork) give way to the defaults,
    and the worker dies with its parent."""
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)
    die_with_parent(parent)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Drop the files not started yet and kill the pool's processes now (on SIGTERM they did not get
    the signal; on Ctrl-C they did, but may be deep in native code)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # shutdown forgets them
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(OSError, AttributeError, ValueError):
            process.kill()
    # The pool's manager thread closes its wake-up pipe when it sees the workers gone; if the interpreter
    # exits before that, concurrent.futures' exit hook may write to the pipe as it closes (Python 3.11:
    # "OSError: Bad file descriptor" printed at exit). Waiting for the thread closes that window.
    if manager is not None:
        manager.join(timeout=5)


def cpu_count() -> int:
    """The CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def lint_files(
    files: Sequence[str],
    resolver: Resolver,
    *,
    cache: Cache | None = None,
    mode: FixMode | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
) -> list[FixOutcome]:
    """Lint (or fix) every file; outcomes come back in the order of `files`.

    `workers`: None picks serial or parallel by the amount of work; 1 forces serial; more forces a pool.
    Raises `ConfigError` when a file's configuration is broken; SIGTERM and SIGHUP raise `Terminated`
    (after the workers are stopped).
    """
    with _terminating_signals():
        if mode is not None and mode.write:
            for directory in sorted({os.path.dirname(os.path.abspath(path)) for path in files}):
                remove_leftover_temps(directory)
        outcomes = _lint_files(files, resolver, cache, mode, progress, workers)
        if mode is not None and mode.write:
            outcomes = _fix_other_files(outcomes, resolver, mode)
        if cache is not None:
            cache.save()
        return outcomes


def _fix_other_files(outcomes: list[FixOutcome], resolver: Resolver, mode: FixMode) -> list[FixOutcome]:
    """The fixes that edit another file, after every file of the run had its own fixes written.

    The workers leave alone the files of the run (two processes must not write one file); here, one
    file at a time, each file whose findings kept such a fix is fixed again, seeing the files as the run
    left them, and what its fixes change elsewhere is written before the next file is looked at.
    """
    from gradguard.fixes import fix_file, wanted, write_others

    done = write_others(outcomes) if any(outcome.others for outcome in outcomes) else list(outcomes)
    for index, outcome in enumerate(done):
        result = outcome.result
        if result.errors or not any(d.fix is not None and d.fix.other_files and wanted(d.fix, mode.unsafe)
                                    for d in result.diagnostics):
            continue
        try:
            data = read_bytes(result.path)
            item = prepare(data, result.path)
            again = fix_file(item, resolver.for_file(result.path).selection(result.path), digest(data),
                             unsafe=mode.unsafe, write=True)
        except InputError as exc:
            again = FixOutcome(FileResult(result.path, errors=(exc.error,)))
        (again,) = write_others([again])
        done[index] = FixOutcome(again.result, outcome.fixed + again.fixed, outcome.diff + again.diff,
                              outcome.fixed_codes + again.fixed_codes, outcome.others + again.others)
    return done


@dataclass(frozen=True)
class _Seen:
    """What the index needs to record a file once its result is known."""

    info: os.stat_result
    looked_ns: int
    fingerprint: str
    notebook: bool


def _lint_files(
    files: Sequence[str],
    resolver: Resolver,
    cache: Cache | None,
    mode: FixMode | None,
    progress: Progress | None,
    workers: int | None,
) -> list[FixOutcome]:
    total = len(files)
    compiled = CompiledIndex(cache.folder if cache is not None else None)
    outcomes: list[FixOutcome | None] = [None] * total
    prepared: dict[int, Prepared] = {}
    seen: dict[int, _Seen] = {}
    jobs: list[Job] = []
    fixing = frozenset(os.path.abspath(path) for path in files) if mode is not None and mode.write else frozenset()
    for index, path in enumerate(files):
        selection = resolver.for_file(path).selection(path)
        triaged = _triage(index, path, selection, cache, mode, seen, compiled)
        if isinstance(triaged, FixOutcome):
            outcomes[index] = triaged
            continue
        item, key, data = triaged
        prepared[index] = item
        jobs.append(
            Job(
                index=index,
                path=path,
                text=item.source,
                encoding=item.encoding,
                notebook=item.notebook is not None,
                selection=selection,
                key=key if mode is None else None,
                original_digest=digest(data) if mode is not None else "",
                mode=mode,
                cache_root=cache.folder.parent if cache is not None and mode is None else None,
                markers=None,
                fixing=fixing,
            )
        )
    # The first report comes with the first analysed file: by then the pool's processes are forked, so a
    # progress display's thread never exists at fork time.
    done = total - len(jobs)

    def finished(job: Job, outcome: FixOutcome) -> None:
        nonlocal done
        result = outcome.result
        if cache is not None and job.key is not None and job.index in seen and not result.errors:
            file = seen[job.index]
            cache.record(
                job.path,
                file.info,
                file.looked_ns,
                file.fingerprint,
                file.notebook,
                job.key,
                result.dependencies,
            )
        if result.source is None and job.index in prepared:
            result = _attach_source(result, prepared[job.index])
        outcomes[job.index] = replace(outcome, result=result)
        done += 1
        if progress is not None:
            progress(done, total)

    if workers is None:
        size = sum(len(job.text) for job in jobs)
        workers = min(cpu_count(), len(jobs)) if len(jobs) > 1 and size >= PARALLEL_MIN_BYTES else 1
    if workers <= 1 or len(jobs) <= 1:
        for job in jobs:
            finished(job, run_job_safely(job))
    else:
        # Largest first, so that no big file starts last and keeps one worker busy alone.
        jobs.sort(key=lambda job: len(job.text), reverse=True)
        run_pool(jobs, min(workers, len(jobs)), finished, run_job)
    compiled.save()  # after the jobs, which create the cache folder when there is anything to cache
    return [outcome for outcome in outcomes if outcome is not None]


def _triage(
    index: int,
    path: str,
    selection: Selection,
    cache: Cache | None,
    mode: FixMode | None,
    seen: dict[int, _Seen],
    compiled: CompiledIndex,
) -> FixOutcome | tuple[Prepared, str | None, bytes]:
    """Everything done to one file in this process: the index, reading, decoding, the prefilter and the
    cache. Returns the file's outcome, or what a job needs to analyse it. Nothing escapes for one file:
    a failure at any stage becomes that file's one-line error."""
    notebook = is_notebook(path)
    stage = "reading"
    try:
        looked = time.time_ns()
        try:
            info: os.stat_result | None = os.stat(path)
        except OSError:
            info = None  # read_bytes says why
        fingerprint = selection.fingerprint()
        if cache is not None and info is not None:
            stage = "reading the cache for"
            served = _from_index(cache, path, info, fingerprint, notebook, mode)
            if served is not None:
                return served
            seen[index] = _Seen(info, looked, fingerprint, notebook)
        stage = "reading"
        data = read_bytes(path)
        # A script is always decoded (an undecodable or binary file is reported even when it could not
        # hold a finding); one that cannot hold a finding is then not parsed.
        stage = "decoding"
        item = None if notebook else prepare(data, path)
        stage = "prefiltering"
        relevant, consulted = prescreen(data, item, selection.api) if item is not None else (True, ())
        if not relevant:
            stage = "checking the syntax of"
            checked = _checked_skip(item, data, compiled)
            if cache is not None and info is not None and checked.skipped:
                cache.record(path, info, looked, fingerprint, notebook, None, consulted)
            return FixOutcome(checked)
        key = None
        if cache is not None:
            stage = "reading the cache for"
            key = entry_key(data, fingerprint, notebook)
            hit = cache.get(key, path)
            if hit is not None and (mode is None or not mode.wants(hit)):
                if info is not None:
                    cache.record(path, info, looked, fingerprint, notebook, key, hit.dependencies)
                return FixOutcome(_with_source(hit, item, path, data))
        stage = "decoding"
        if item is None:
            item = prepare(data, path)
        stage = "prefiltering"
        skipped = screen(item, data, selection.api)
        if skipped is not None:
            stage = "checking the syntax of"
            skipped = _checked_skip(item, data, compiled)
            if not skipped.skipped:
                return FixOutcome(skipped)
            skipped = replace(skipped, source=None, cells=())
            if cache is not None and key is not None and notebook:
                cache.put(key, skipped)  # spares parsing the notebook's JSON again next time
                if info is not None:
                    cache.record(path, info, looked, fingerprint, notebook, key)
            return FixOutcome(skipped)
        return item, key, data
    except InputError as exc:
        return FixOutcome(FileResult(path, errors=(exc.error,)))
    except Exception as exc:  # noqa: BLE001 - one file's failure (a bug in gradguard) must not stop the run
        message = f"internal error while {stage} this file, please report it: {type(exc).__name__}: {exc}"
        return FixOutcome(FileResult(path, errors=(FileError(path, message),)))


def _from_index(
    cache: Cache, path: str, info: os.stat_result, fingerprint: str, notebook: bool, mode: FixMode | None
) -> FixOutcome | None:
    """The outcome of a file the index knows unchanged (it is not read, unless its excerpts are shown)."""
    record = cache.lookup(path, info, fingerprint, notebook)
    if record is None:
        return None
    if record["skipped"]:
        return FixOutcome(FileResult(path, skipped=True))
    hit = cache.get(record["key"], path)
    if hit is None or (mode is not None and mode.wants(hit)):
        return None
    return FixOutcome(_with_source(hit, None, path))


def _checked_skip(item: Prepared, data: bytes, compiled: CompiledIndex) -> FileResult:
    """A file the prefilter skips: not analysed, but a syntax error in it is still reported."""
    if compiled.compiles(data):
        return FileResult(item.path, skipped=True)
    error = syntax_error(item)
    if error is None:
        compiled.add(data)
        return FileResult(item.path, skipped=True)
    return _attach_source(FileResult(item.path, errors=(error,)), item)


def _shows_source(result: FileResult) -> bool:
    return bool(result.diagnostics) or any(error.row for error in result.errors)


def _attach_source(result: FileResult, item: Prepared) -> FileResult:
    """Reporters show excerpts: give them the text (only results with something to show need it)."""
    if not _shows_source(result):
        return result
    cells = item.notebook.cells if item.notebook is not None else ()
    return replace(result, source=item.program, cells=cells)


def _with_source(
    result: FileResult, item: Prepared | None, path: str, data: bytes | None = None
) -> FileResult:
    """A cached result, with its text when a reporter will show it (read and parsed again if need be)."""
    if not _shows_source(result):
        return result
    try:
        if item is None:
            item = prepare(data if data is not None else read_bytes(path), path)
        return _attach_source(result, item)
    except InputError:
        return result


def run_job(job: Job) -> FixOutcome:
    """Analyse (or fix) one file; runs in a worker process or inline. Writes its cache entry."""
    marker = os.path.join(job.markers, str(job.index)) if job.markers else None
    if marker is not None:
        with open(marker, "w"):
            pass
    try:
        item = _rebuild(job)
        if job.mode is not None:
            from gradguard.fixes import fix_file

            outcome = fix_file(
                item, job.selection, job.original_digest, unsafe=job.mode.unsafe, write=job.mode.write,
                fixed_apart=job.fixing,
            )
        else:
            outcome = FixOutcome(analyse(item, job.selection))
        result = outcome.result
        if job.key is not None and job.cache_root is not None and not result.errors:
            Cache(job.cache_root).put(job.key, result)
        if outcome.fixed == 0:
            outcome = replace(outcome, result=replace(result, source=None, cells=()))
        return outcome
    finally:
        if marker is not None:
            os.unlink(marker)


def _rebuild(job: Job) -> Prepared:
    if not job.notebook:
        return Prepared(job.path, job.text, job.encoding)
    from gradguard.notebook import parse_notebook

    return Prepared(job.path, job.text, job.encoding, parse_notebook(job.text))


def run_job_safely(job: Job) -> FixOutcome:
    """`run_job` inline: whatever escapes it becomes a FileError for this file."""
    try:
        return run_job(job)
    except Exception as exc:  # one file's failure must not stop the run
        return _failure(job, f"internal error, please report it: {type(exc).__name__}: {exc}")


def _failure(job: Job, message: str) -> FixOutcome:
    return FixOutcome(FileResult(job.path, errors=(FileError(job.path, message),)))


WORKER_DIED = "the analysis process died on this file (killed, out of memory or crashed); it was not linted"


def run_pool(
    jobs: list[Job],
    workers: int,
    finished: Callable[[Job, FixOutcome], None],
    work: Callable[[Job], FixOutcome],
) -> None:
    """Run jobs in worker processes, surviving workers that die (see the module docstring)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    context = multiprocessing.get_context("fork")
    markers = tempfile.mkdtemp(prefix="gradguard-workers-")
    try:
        pending = [replace(job, markers=markers) for job in jobs]
        while pending:
            unfinished: list[Job] = []
            with ProcessPoolExecutor(
                max_workers=min(workers, len(pending)),
                mp_context=context,
                initializer=_worker_start,
                initargs=(os.getpid(),),
            ) as pool:
                try:
                    futures = {}
                    for position, job in enumerate(pending):
                        try:
                            futures[pool.submit(work, job)] = job
                        except BrokenProcessPool:
                            # A worker died while jobs were still being handed out.
                            unfinished.extend(pending[position:])
                            break
                    for future in as_completed(futures):
                        job = futures[future]
                        try:
                            finished(job, future.result())
                        except BrokenProcessPool:
                            unfinished.append(job)
                        except Exception as exc:  # e.g. a result that cannot be pickled
                            finished(
                                job,
                                _failure(
                                    job, f"internal error, please report it: {type(exc).__name__}: {exc}"
                                ),
                            )
                except KeyboardInterrupt:
                    # Ctrl-C, SIGTERM, SIGHUP: drop the files not started yet (or leaving the pool would
                    # analyse them all first) and end the running ones.
                    _stop_workers(pool)
                    raise
            started = set(os.listdir(markers))
            for name in started:
                os.unlink(os.path.join(markers, name))
            suspects = [job for job in unfinished if str(job.index) in started]
            if unfinished and not suspects:
                # The pool died outside any job: no file to blame; isolate one so every round progresses.
                suspects = unfinished[:1]
            for job in suspects:
                finished(job, _isolated(job, context, work))
            blamed = {job.index for job in suspects}
            pending = [job for job in unfinished if job.index not in blamed]
    finally:
        shutil.rmtree(markers, ignore_errors=True)


def _isolated(job: Job, context: BaseContext, work: Callable[[Job], FixOutcome]) -> FixOutcome:
    """Run one job alone in a fresh process: if that process dies too, the file is the cause."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(
        max_workers=1, mp_context=context, initializer=_worker_start, initargs=(os.getpid(),)
    ) as pool:
        try:
            return pool.submit(work, job).result()
        except KeyboardInterrupt:
            _stop_workers(pool)
            raise
        except BrokenProcessPool:
            return _failure(job, WORKER_DIED)
        except Exception as exc:  # e.g. a result that cannot be pickled
            return _failure(job, f"internal error, please report it: {type(exc).__name__}: {exc}")
        finally:
            if job.markers:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(job.markers, str(job.index)))
