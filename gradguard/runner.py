"""Lint many files: read, prefilter and look up the cache in this process; analyse the rest in workers.

Each file is read once. The parent decodes it, runs the cheap prefilter and the cache lookup, so a warm
run starts no worker and parses nothing. What is left goes to worker processes when there is
enough of it to pay for them (serially otherwise). A worker that dies on a file (killed, out of memory,
a crash in native code) costs that file a `FileError`, not the run: the pool is rebuilt, the files that
were in flight are retried one by one in their own process, and the rest go on.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
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
from gradguard.fixes import FixOutcome, digest
from gradguard.model import Applicability, FileError, FileResult
from gradguard.syntax_index import CompiledIndex

if TYPE_CHECKING:
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
    Raises `ConfigError` when a file's configuration is broken.
    """
    total = len(files)
    compiled = CompiledIndex(cache.folder if cache is not None else None)
    outcomes: list[FixOutcome | None] = [None] * total
    prepared: dict[int, Prepared] = {}
    jobs: list[Job] = []
    for index, path in enumerate(files):
        selection = resolver.for_file(path).selection(path)
        notebook = is_notebook(path)
        try:
            data = read_bytes(path)
            # A script is always decoded (an undecodable or binary file is reported even when it
            # could not hold a finding); one that cannot hold a finding is then not parsed.
            item = None if notebook else prepare(data, path)
            if item is not None and not prescreen(data):
                outcomes[index] = FixOutcome(_checked_skip(item, data, compiled))
                continue
            key = entry_key(data, selection.fingerprint(), notebook) if cache is not None else None
            if cache is not None and key is not None:
                hit = cache.get(key, path)
                if hit is not None and (mode is None or not mode.wants(hit)):
                    outcomes[index] = FixOutcome(_with_source(hit, item, data, path))
                    continue
            if item is None:
                item = prepare(data, path)
        except InputError as exc:
            outcomes[index] = FixOutcome(FileResult(path, errors=(exc.error,)))
            continue
        skipped = screen(item, data)
        if skipped is not None:
            skipped = _checked_skip(item, data, compiled)
            if cache is not None and key is not None and notebook and skipped.skipped:
                cache.put(key, skipped)  # spares parsing the notebook's JSON again next time
            outcomes[index] = FixOutcome(skipped)
            continue
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
            )
        )
    # The first report comes with the first analysed file: by then the pool's processes are forked, so a
    # progress display's thread never exists at fork time.
    done = total - len(jobs)

    def finished(job: Job, outcome: FixOutcome) -> None:
        nonlocal done
        result = outcome.result
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


def _with_source(result: FileResult, item: Prepared | None, data: bytes, path: str) -> FileResult:
    """A cached result, with its text when a reporter will show it (a notebook is parsed again)."""
    if not _shows_source(result):
        return result
    try:
        return _attach_source(result, item if item is not None else prepare(data, path))
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
                item, job.selection, job.original_digest, unsafe=job.mode.unsafe, write=job.mode.write
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
            with ProcessPoolExecutor(max_workers=min(workers, len(pending)), mp_context=context) as pool:
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
                    # Ctrl-C: drop the files not started yet, or leaving the pool would analyse them all first.
                    pool.shutdown(wait=False, cancel_futures=True)
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

    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        try:
            return pool.submit(work, job).result()
        except BrokenProcessPool:
            return _failure(job, WORKER_DIED)
        except Exception as exc:  # e.g. a result that cannot be pickled
            return _failure(job, f"internal error, please report it: {type(exc).__name__}: {exc}")
        finally:
            if job.markers:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(job.markers, str(job.index)))
