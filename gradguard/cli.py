"""The `gradguard` command: `lint`, `rule` and `run`.

Exit codes, as ruff's: 0 when nothing was found, 1 when there are findings, 2 for a usage or
configuration error or any file that could not be linted. `lint` never imports torch; `rich` and the
parser are imported only when needed, so a warm run starts fast.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

import click

from gradguard import __version__
from gradguard.config import OUTPUT_FORMATS, ConfigError

if TYPE_CHECKING:
    from gradguard.fixes import FixOutcome
    from gradguard.model import FileError, FileResult

# Formats whose stdout a program reads: file errors also go to stderr, where a person sees them.
_MACHINE_FORMATS = ("json", "sarif", "github")
# Show a progress bar only once a run has lasted this long (seconds).
_PROGRESS_AFTER = 0.75


def use_color(stream: TextIO) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _fail(message: str) -> NoReturn:
    click.echo(f"gradguard: error: {message}", err=True)
    sys.exit(2)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="gradguard", message="%(prog)s %(version)s")
def main() -> None:
    """Find and explain PyTorch's "backward through the graph a second time" bugs."""


class _ProgressDisplay:
    """A rich progress bar on stderr, shown only on a terminal and only once the run is long."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.started = time.monotonic()
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or done >= total:
            self.close()
            return
        if self.bar is None:
            if time.monotonic() - self.started < _PROGRESS_AFTER:
                return
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(
                TextColumn("Linting"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(file=sys.stderr),
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task("lint", total=total)
        self.bar.update(self.task, completed=done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def _display(path: str, cwd: Path) -> str:
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute, cwd)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


def _error_line(error: FileError, cwd: Path) -> str:
    where = _display(error.path, cwd)
    if error.row is not None:
        where += f":{error.row}:{error.column or 1}"
    return f"{where}: error: {error.message}"


@main.command()
# readable=False: an unreadable file is reported on its own line, as a missing one is, not as a usage error.
@click.argument("paths", nargs=-1, type=click.Path(path_type=str, readable=False))
@click.option(
    "--select",
    metavar="CODES",
    help="Comma-separated rule codes or prefixes to enable (replaces the config's).",
)
@click.option("--ignore", metavar="CODES", help="Comma-separated rule codes or prefixes to disable.")
@click.option(
    "--extend-select", metavar="CODES", help="Rule codes or prefixes to enable on top of the selection."
)
@click.option(
    "--output-format",
    type=click.Choice(OUTPUT_FORMATS),
    default=None,
    help="How findings are shown (default: the config's output-format, else concise).",
)
@click.option(
    "--statistics", is_flag=True, help="Show the number of findings per rule instead of the findings."
)
@click.option("--fix", is_flag=True, help="Apply the safe fixes.")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff, also apply the unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff instead of writing them.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the cache (.gradguard_cache/).")
@click.option(
    "--force-exclude", is_flag=True, help="Apply exclude and .gitignore to paths given explicitly too."
)
@click.option("--exit-zero", is_flag=True, help="Exit with 0 even when there are findings.")
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Use this configuration file.",
)
@click.option(
    "-q", "--quiet", is_flag=True, help="Print the findings and nothing else (no progress, no summaries)."
)
@click.option("--workers", type=click.IntRange(min=1), default=None, hidden=True, help="Number of processes.")
def lint(
    paths: tuple[str, ...],
    select: str | None,
    ignore: str | None,
    extend_select: str | None,
    output_format: str | None,
    statistics: bool,
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    no_cache: bool,
    force_exclude: bool,
    exit_zero: bool,
    config_file: Path | None,
    quiet: bool,
    workers: int | None,
) -> None:
    """Lint Python files and notebooks (default: the current folder)."""
    from gradguard.cache import Cache
    from gradguard.config import CliOverrides, Resolver, check_per_file_patterns, known_codes, parse_cli_codes
    from gradguard.discovery import discover
    from gradguard.runner import FixMode, lint_files

    cwd = Path.cwd()
    try:
        known = known_codes() if (select or ignore or extend_select) else ()
        overrides = CliOverrides(
            select=parse_cli_codes(select, "--select", known),
            extend_select=parse_cli_codes(extend_select, "--extend-select", known) or (),
            ignore=parse_cli_codes(ignore, "--ignore", known) or (),
            output_format=output_format,
        )
        resolver = Resolver(cwd, overrides, config_file)
        root_settings = resolver.for_path(cwd)
        found = discover(list(paths) or ["."], resolver, force_exclude=force_exclude)
        for path in found.files:
            resolver.for_file(path)
        for settings in resolver.all_settings():
            check_per_file_patterns(settings, found.files)
        mode = FixMode(write=not diff, unsafe=unsafe_fixes) if (fix or diff) else None
        cache = None if no_cache else Cache(root_settings.root)
        display = _ProgressDisplay(enabled=not quiet and sys.stderr.isatty())
        try:
            outcomes = lint_files(
                found.files, resolver, cache=cache, mode=mode, progress=display, workers=workers
            )
        finally:
            display.close()
    except ConfigError as exc:
        _fail(str(exc))
    except KeyboardInterrupt as exc:
        # Neither "clean" nor "findings": 128 + the signal, as a shell reports a command it stopped (130
        # for Ctrl-C; SIGTERM and SIGHUP arrive as the runner's `Terminated`, which names its signal).
        signum = getattr(exc, "signum", 2)
        click.echo("gradguard: interrupted" if signum == 2 else f"gradguard: stopped by {exc}", err=True)
        sys.exit(128 + signum)
    from gradguard.model import FileResult

    results: list[FileResult] = [FileResult(error.path, errors=(error,)) for error in found.errors]
    results.extend(outcome.result for outcome in outcomes)
    fmt = root_settings.effective_output_format
    code = _report(results, outcomes, fmt=fmt, cwd=cwd, statistics=statistics, mode=mode, quiet=quiet)
    sys.exit(0 if exit_zero and code == 1 else code)


def _report(
    results: list[FileResult],
    outcomes: list[FixOutcome],
    *,
    fmt: str,
    cwd: Path,
    statistics: bool,
    mode: Any,
    quiet: bool,
) -> int:
    """Print what the run found and return the exit code."""
    from gradguard import report

    stdout = sys.stdout
    errors = [error for result in results for error in result.errors]
    fixed = sum(outcome.fixed for outcome in outcomes)
    if mode is not None and not mode.write:
        for outcome in outcomes:
            if outcome.diff:
                stdout.write(outcome.diff)
        for error in errors:
            click.echo(_error_line(error, cwd), err=True)
        if not quiet:
            click.echo(f"Would fix {fixed} finding{'s' if fixed != 1 else ''}.", err=True)
        stdout.flush()
        return 2 if errors else (1 if fixed else 0)
    if statistics or fmt in _MACHINE_FORMATS:
        for error in errors:
            click.echo(_error_line(error, cwd), err=True)
    shown = [result for result in results if result.diagnostics or result.errors]
    if statistics:
        report.emit_statistics(shown, out=stdout, color=use_color(stdout))
    else:
        report.emit(shown, fmt=fmt, out=stdout, color=use_color(stdout), cwd=cwd)
    stdout.flush()
    if mode is not None and fixed and not quiet:
        files = sum(1 for outcome in outcomes if outcome.fixed)
        click.echo(
            f"Fixed {fixed} finding{'s' if fixed != 1 else ''} in {files} file{'s' if files != 1 else ''}.",
            err=True,
        )
    if errors:
        return 2
    return 1 if any(result.diagnostics for result in results) else 0


@main.command()
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule of the catalogue.")
def rule(code: str | None, show_all: bool) -> None:
    """Show a rule's document (`gradguard rule GG001`) or the whole catalogue (`--all`)."""
    from rich.console import Console

    from gradguard import catalogue
    from gradguard.report.rule_doc import render_catalogue, render_rule

    if not show_all and code is None:
        raise click.UsageError("give a rule code (e.g. GG001) or --all")
    stdout = sys.stdout
    console = Console(file=stdout, no_color=not use_color(stdout), highlight=False)
    if show_all:
        render_catalogue(list(catalogue.load().values()), console)
        return
    assert code is not None
    try:
        doc = catalogue.get(code)
    except KeyError:
        _fail(f"unknown rule code {code!r} (`gradguard rule --all` lists them)")
    render_rule(doc, console)


@main.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option(
    "--report", "report_file", type=click.Path(dir_okay=False), help="Also write the diagnosis as JSON here."
)
@click.option("-m", "module", metavar="MODULE", help="Run a module as `python -m MODULE` would.")
@click.option("--deep", is_flag=True, help="Also record creation sites and recent roots (slower, more exact).")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def run(report_file: str | None, module: str | None, deep: bool, args: tuple[str, ...]) -> None:
    """Run a script (or `-m MODULE`) with the runtime monitor installed: `gradguard run train.py ARGS...`."""
    if module is not None:
        target, rest = module, list(args)
    elif args:
        target, rest = args[0], list(args[1:])
    else:
        raise click.UsageError("give a script to run, or -m MODULE")
    from gradguard.runtime.runner import run_program

    sys.exit(run_program(target, rest, module=module is not None, report=report_file, deep=deep))
