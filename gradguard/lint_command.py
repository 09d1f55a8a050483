"""What `gradguard lint` does once click has read its options: lint, fix, add `# noqa`, report.

Kept apart from `cli.py` so the commands stay a thin layer of options. Output goes where ruff sends it:
findings to stdout (or `--output-file`), everything meant for a person (progress, "Fixed ...", warnings,
file errors of the machine formats) to stderr; `-q` keeps only the findings.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

if TYPE_CHECKING:
    from gradguard.config import Resolver
    from gradguard.fixes import FixOutcome
    from gradguard.model import FileError, FileResult
    from gradguard.runner import FixMode

# Formats whose output a program reads: file errors also go to stderr, where a person sees them.
MACHINE_FORMATS = ("json", "json-lines", "sarif", "github", "gitlab", "junit", "pylint", "rdjson")
NO_FILES = "No Python files found under the given path(s)"


@dataclass(frozen=True)
class Options:
    """The output-related options of one `gradguard lint` run."""

    fmt: str
    statistics: bool = False
    quiet: bool = False
    show_fixes: bool = False
    fix_only: bool = False
    exit_non_zero_on_fix: bool = False
    output_file: Path | None = None


def use_color(stream: TextIO) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def warn(message: str) -> None:
    """A warning for a person, on stderr (ruff's `warning: ...`)."""
    click.echo(f"warning: {message}", err=True)


def display(path: str, cwd: Path) -> str:
    """A path relative to `cwd` when it lies inside it."""
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute, cwd)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


def error_line(error: FileError, cwd: Path) -> str:
    """`path:row:col: error: message`, as a person reads it on stderr."""
    where = display(error.path, cwd)
    if error.row is not None:
        where += f":{error.row}:{error.column or 1}"
    return f"{where}: error: {error.message}"


@contextlib.contextmanager
def report_stream(output_file: Path | None) -> Iterator[TextIO]:
    """stdout, or the `--output-file` (its folder created), written as UTF-8."""
    if output_file is None:
        yield sys.stdout
        sys.stdout.flush()
        return
    with contextlib.ExitStack() as stack:
        try:
            output_file.parent.mkdir(parents=True, exist_ok=True)
            handle = stack.enter_context(open(output_file, "w", encoding="utf-8", newline="\n"))
        except OSError as exc:
            from gradguard.config import ConfigError

            raise ConfigError(f"--output-file {output_file}: {exc.strerror or exc}") from None
        yield handle


def plural(count: int, word: str) -> str:
    """`1 finding`, `2 findings`."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def report(
    results: list[FileResult], outcomes: list[FixOutcome], *, options: Options, cwd: Path, mode: FixMode | None
) -> int:
    """Print what the run found and return the exit code."""
    from gradguard import report as reporters

    errors = [error for result in results for error in result.errors]
    fixed = sum(outcome.fixed for outcome in outcomes)
    fixed_exit = 1 if options.exit_non_zero_on_fix and fixed else 0
    if mode is not None and not mode.write:
        with report_stream(options.output_file) as out:
            # A module the run lints itself shows its own fixes; another file's fixes of it are not
            # shown twice (they would be applied after its own, if still needed, by `--fix`).
            shown = {os.path.abspath(o.result.path) for o in outcomes if o.diff}
            for outcome in outcomes:
                if outcome.diff:
                    out.write(outcome.diff)
                for other in outcome.others:
                    if other.diff and other.path not in shown:
                        shown.add(other.path)
                        out.write(other.diff)
            out.flush()  # the diff comes before the summary on stderr, even through one pipe
        for error in errors:
            click.echo(error_line(error, cwd), err=True)
        if not options.quiet:
            click.echo(f"Would fix {plural(fixed, 'finding')}.", err=True)
        return 2 if errors else (1 if fixed else 0)
    quiet = options.quiet
    fixes = None
    if mode is not None and not quiet:
        # A fix may edit the project module where the cause of a finding sits: say which were changed.
        for outcome in outcomes:
            for other in outcome.others:
                click.echo(f"Fixed {display(other.path, cwd)} too (the cause of a finding in "
                           f"{display(outcome.result.path, cwd)})", err=True)
    if mode is not None:
        files = tuple((display(o.result.path, cwd), o.fixed_codes) for o in outcomes if o.fixed_codes)
        fixes = reporters.Fixed(files, listed=options.show_fixes and not quiet)
    if options.fix_only:
        for error in errors:
            click.echo(error_line(error, cwd), err=True)
        if fixes is not None and fixes.codes and not quiet:
            with report_stream(options.output_file) as out:
                reporters.emit_fixed(fixes, out=out, color=options.output_file is None and use_color(out))
        return 2 if errors else fixed_exit
    if options.statistics or options.fmt in MACHINE_FORMATS or options.output_file is not None:
        for error in errors:
            click.echo(error_line(error, cwd), err=True)
    shown = [result for result in results if result.diagnostics or result.errors or result.incomplete]
    if not quiet:
        # Giving up is a fact: the parts of a file the analysis did not follow to the end.
        incomplete = [(result.path, note) for result in results for note in result.incomplete]
        for path, note in incomplete:
            where = reporters.note_where(note)
            click.echo(f"{display(path, cwd)}{':' + where if where else ''}: note: {note.message}", err=True)
        if options.statistics and incomplete:
            files = len({path for path, _ in incomplete})
            click.echo(f"analysis incomplete in {plural(files, 'file')} ({plural(len(incomplete), 'part')})", err=True)
    with report_stream(options.output_file) as out:
        color = options.output_file is None and use_color(out)
        if options.statistics:
            reporters.emit_statistics(shown, out=out, color=color, summary=not quiet, fixed=fixes)
        else:
            reporters.emit(shown, fmt=options.fmt, out=out, color=color, cwd=cwd, summary=not quiet, fixed=fixes)
    if fixed and not quiet and options.fmt in MACHINE_FORMATS and not options.statistics:
        # The machine formats carry no summary: the person running it still learns what was fixed.
        files_fixed = sum(1 for outcome in outcomes if outcome.fixed)
        click.echo(f"Fixed {plural(fixed, 'finding')} in {plural(files_fixed, 'file')}.", err=True)
    if errors:
        return 2
    return 1 if any(result.diagnostics for result in results) else fixed_exit


def lint_stdin(
    filename: str | None, resolver: Resolver, mode: FixMode | None, options: Options, cwd: Path
) -> int:
    """`gradguard lint -`: lint (or fix) the text on stdin as if it were the file `filename`.

    With `--fix`, the fixed text goes to stdout and the findings left to stderr, as ruff does, so an
    editor can pipe a buffer through it.
    """
    from gradguard import engine
    from gradguard.fixes import FixOutcome, fix_prepared, unified_diff
    from gradguard.model import FileResult

    path = filename or "-"
    data = sys.stdin.buffer.read()
    selection = resolver.for_file(os.path.join(str(cwd), path)).selection(path)
    try:
        item = engine.prepare(data, path)
    except engine.InputError as exc:
        if mode is not None and mode.write:
            sys.stdout.buffer.write(data)
        return report([FileResult(path, errors=(exc.error,))], [], options=options, cwd=cwd, mode=None)
    if mode is None:
        result = _check_text(item, data, selection)
        return report([result], [FixOutcome(result)], options=options, cwd=cwd, mode=None)
    codes: list[str] = []
    try:
        fixed, remaining, count, note = fix_prepared(item, selection, unsafe=mode.unsafe, fixed_codes=codes)
    except engine.InputError as exc:
        fixed, remaining, count, note = item, (), 0, None
        errors: tuple[FileError, ...] = (exc.error,)
    else:
        errors = (engine.FileError(path, note),) if note else ()
    result = FileResult(
        path,
        diagnostics=engine.to_file_coordinates(fixed, remaining),
        errors=errors,
        source=fixed.program,
        cells=fixed.notebook.cells if fixed.notebook is not None else (),
    )
    outcome = FixOutcome(result, count, unified_diff(item, fixed) if count else "", tuple(codes))
    if not mode.write:
        return report([result], [outcome], options=options, cwd=cwd, mode=mode)
    sys.stdout.write(fixed.source)
    sys.stdout.flush()
    # The fixed text owns stdout: what is left to say goes to stderr.
    with contextlib.redirect_stdout(sys.stderr):
        code = report([result], [outcome], options=options, cwd=cwd, mode=mode)
    return code


def _check_text(item: object, data: bytes, selection: object) -> FileResult:
    from gradguard import engine
    from gradguard.model import FileResult

    assert isinstance(item, engine.Prepared)
    if engine.screen(item, data, selection.api) is not None:  # type: ignore[attr-defined]
        error = engine.syntax_error(item)
        return FileResult(item.path, errors=(error,), source=item.program) if error else FileResult(item.path)
    return engine.analyse(item, selection)  # type: ignore[arg-type]


def add_noqa(results: list[FileResult], cwd: Path) -> int:
    """`--add-noqa`: a `# noqa: CODES` on every line with a finding; returns the exit code.

    Each file is written atomically only if it did not change since it was linted, and only if the
    result still compiles (a directive cannot follow a line continuation).
    """
    from gradguard.engine import InputError, prepare, read_bytes
    from gradguard.fixes import digest, write_atomic
    from gradguard.noqa import add_directives

    added = 0
    failed = False
    for result in sorted((r for r in results if r.diagnostics), key=lambda r: display(r.path, cwd)):
        try:
            data = read_bytes(result.path)
            item = prepare(data, result.path)
            by_cell: dict[int | None, dict[int, set[str]]] = {}
            for diagnostic in result.diagnostics:
                rows = by_cell.setdefault(diagnostic.cell, {})
                rows.setdefault(diagnostic.span.start.row, set()).add(diagnostic.code)
            text, count = _with_directives(item, by_cell, add_directives)
            if count:
                write_atomic(result.path, text.encode(item.encoding), digest(data))
            added += count
        except InputError as exc:
            click.echo(error_line(exc.error, cwd), err=True)
            failed = True
    click.echo(f"Added {plural(added, 'noqa directive')}.", err=True)
    return 2 if failed or any(r.errors for r in results) else 0


def _with_directives(item, by_cell, add_directives) -> tuple[str, int]:  # type: ignore[no-untyped-def]
    """The file's new text with the directives added (InputError when it would no longer compile)."""
    from gradguard.engine import InputError
    from gradguard.model import FileError

    if item.notebook is None:
        text, count = add_directives(item.source, by_cell.get(None, {}))
        check = [text]
    else:
        from gradguard.notebook import dump_notebook, replace_cell_sources

        sources = dict(item.notebook.cells)
        changed: dict[int, str] = {}
        count = 0
        for cell, rows in by_cell.items():
            if cell in sources:
                changed[cell], added = add_directives(sources[cell], rows)
                count += added
        text = dump_notebook(replace_cell_sources(item.notebook.document, changed), item.source)
        check = []  # cells may hold IPython syntax; a comment at a line's end never breaks a cell
    for source in check:
        try:
            compile(source, item.path, "exec", dont_inherit=True)
        except SyntaxError:
            raise InputError(
                FileError(item.path, "noqa directives not added: the file would no longer compile")
            ) from None
        except (ValueError, RecursionError, MemoryError):
            pass
    return text, count
