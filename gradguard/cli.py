"""The `gradguard` command: `lint`, `rule`, `clean`, `explain`, `server` and `run`.

Exit codes, as ruff's: 0 when nothing was found, 1 when there are findings, 2 for a usage or
configuration error or any file that could not be linted. `lint` never imports torch; `rich` and the
parser are imported only when needed, so a warm run starts fast.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from gradguard import __version__, lint_command
from gradguard.config import OUTPUT_FORMATS, ConfigError
from gradguard.lint_command import use_color

if TYPE_CHECKING:
    from gradguard.config import Resolver
    from gradguard.runner import FixMode

# Show a progress bar only once a run has lasted this long (seconds).
_PROGRESS_AFTER = 0.75


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
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

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
    "-o", "--output-file", type=click.Path(dir_okay=False, path_type=Path), help="Write the report to this file."
)
@click.option(
    "--statistics", is_flag=True, help="Show the number of findings per rule instead of the findings."
)
@click.option("--fix", is_flag=True, help="Apply the safe fixes.")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff, also apply the unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff instead of writing them.")
@click.option("--fix-only", is_flag=True, help="Apply the fixes and report nothing of what is left (implies --fix).")
@click.option("--show-fixes", is_flag=True, help="With --fix, list the findings the fixes removed, per file.")
@click.option(
    "--exit-non-zero-on-fix", is_flag=True, help="Exit with 1 when anything was fixed, even if nothing is left."
)
@click.option("--add-noqa", is_flag=True, help="Add a `# noqa: CODES` directive to every line with a finding.")
@click.option(
    "--stdin-filename",
    metavar="PATH",
    help="With `-` as the path: the name of the file read from stdin (for settings and messages).",
)
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
@click.option(
    "-w", "--watch", is_flag=True, help="Lint again whenever a linted file or a configuration file changes."
)
@click.option("--workers", type=click.IntRange(min=1), default=None, hidden=True, help="Number of processes.")
def lint(
    paths: tuple[str, ...],
    select: str | None,
    ignore: str | None,
    extend_select: str | None,
    output_format: str | None,
    output_file: Path | None,
    statistics: bool,
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    fix_only: bool,
    show_fixes: bool,
    exit_non_zero_on_fix: bool,
    add_noqa: bool,
    stdin_filename: str | None,
    no_cache: bool,
    force_exclude: bool,
    exit_zero: bool,
    config_file: Path | None,
    quiet: bool,
    watch: bool,
    workers: int | None,
) -> None:
    """Lint Python files and notebooks (default: the current folder; `-` reads stdin)."""
    from gradguard.config import CliOverrides, Resolver, known_codes, parse_cli_codes
    from gradguard.runner import FixMode

    cwd = Path.cwd()
    if "-" in paths and len(paths) > 1:
        raise click.UsageError("`-` (stdin) cannot be combined with other paths")
    if add_noqa and (fix or fix_only or diff):
        raise click.UsageError("--add-noqa cannot be combined with --fix, --fix-only or --diff")
    if watch and (paths == ("-",) or add_noqa):
        raise click.UsageError("--watch lints files: it cannot be combined with `-` or --add-noqa")
    fix = fix or fix_only
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
        mode = FixMode(write=not diff, unsafe=unsafe_fixes) if (fix or diff) else None
        options = lint_command.Options(
            fmt=root_settings.effective_output_format,
            statistics=statistics,
            quiet=quiet,
            show_fixes=show_fixes,
            fix_only=fix_only and not diff,
            exit_non_zero_on_fix=exit_non_zero_on_fix,
            output_file=output_file,
        )
        if paths == ("-",):
            if add_noqa:
                raise click.UsageError("--add-noqa needs files to write, not `-`")
            code = lint_command.lint_stdin(stdin_filename, resolver, mode, options, cwd)
            sys.exit(0 if exit_zero and code == 1 else code)
        round_args = _Round(
            paths=list(paths) or ["."], force_exclude=force_exclude, quiet=quiet, no_cache=no_cache,
            mode=mode, workers=workers, add_noqa=add_noqa, options=options, cwd=cwd, config_file=config_file,
        )

        def resolver_for_round() -> Resolver:
            # A fresh one each round: an edited pyproject.toml applies to the next round.
            return Resolver(cwd, overrides, config_file)

        if watch:
            _watch(round_args, resolver_for_round, config_file)
        code = _lint_round(resolver, round_args)[0]
    except ConfigError as exc:
        _fail(str(exc))
    except KeyboardInterrupt as exc:
        # Neither "clean" nor "findings": 128 + the signal, as a shell reports a command it stopped (130
        # for Ctrl-C; SIGTERM and SIGHUP arrive as the runner's `Terminated`, which names its signal).
        signum = getattr(exc, "signum", 2)
        click.echo("gradguard: interrupted" if signum == 2 else f"gradguard: stopped by {exc}", err=True)
        sys.exit(128 + signum)
    sys.exit(0 if exit_zero and code == 1 else code)


@dataclass(frozen=True)
class _Round:
    """What one round of `gradguard lint` needs besides the settings (a watch repeats rounds)."""

    paths: list[str]
    force_exclude: bool
    quiet: bool
    no_cache: bool
    mode: FixMode | None
    workers: int | None
    add_noqa: bool
    options: lint_command.Options
    cwd: Path
    config_file: Path | None = None


def _lint_round(resolver: Resolver, how: _Round) -> tuple[int, list[str]]:
    """Discover, warn, lint and report (or add `# noqa`) once: the exit code, and the files linted."""
    from gradguard.cache import Cache
    from gradguard.config import check_per_file_patterns
    from gradguard.discovery import discover
    from gradguard.model import FileResult
    from gradguard.runner import lint_files

    cache = None if how.no_cache else Cache(resolver.for_path(how.cwd).root)
    memo = cache.walk_memo(f"{how.cwd}\0{how.config_file}") if cache is not None else None
    found = discover(how.paths, resolver, force_exclude=how.force_exclude, memo=memo)
    for path in found.files:
        resolver.for_file(path)
    for settings in resolver.all_settings():
        for message in check_per_file_patterns(settings, found.files):
            if not how.quiet:
                lint_command.warn(message)
    if not found.files and not found.errors and not how.quiet:
        lint_command.warn(lint_command.NO_FILES)
    display = _ProgressDisplay(enabled=not how.quiet and sys.stderr.isatty())
    try:
        outcomes = lint_files(
            found.files, resolver, cache=cache, mode=how.mode, progress=display, workers=how.workers
        )
    finally:
        display.close()
    results: list[FileResult] = [FileResult(error.path, errors=(error,)) for error in found.errors]
    results.extend(outcome.result for outcome in outcomes)
    if how.add_noqa:
        return lint_command.add_noqa(results, how.cwd), list(found.files)
    code = lint_command.report(results, outcomes, options=how.options, cwd=how.cwd, mode=how.mode)
    return code, list(found.files)


def _config_files(cwd: Path, config_file: Path | None) -> list[str]:
    """The configuration files a watch follows: `--config`, else those that could apply from `cwd` up
    (created, edited or deleted, each changes the settings of the next round)."""
    if config_file is not None:
        return [str(config_file)]
    names = ("pyproject.toml", "gradguard.toml")
    return [str(folder / name) for folder in (cwd, *cwd.parents) for name in names]


def _watch(how: _Round, new_resolver: Callable[[], Resolver], config_file: Path | None) -> NoReturn:
    """Lint, then lint again at each change of a linted file, a new file or a configuration file, until
    interrupted (Ctrl-C ends it as it ends any run). A configuration error is said and waited out."""
    from functools import partial

    from gradguard.watch import snapshot, wait_for_change

    def say(message: str) -> None:
        if not how.quiet:
            click.echo(f"[{time.strftime('%H:%M:%S')}] {message}", err=True)

    configs = _config_files(how.cwd, config_file)
    files: list[str] = []
    resolver: Resolver | None = None
    say("Starting linter in watch mode...")
    while True:
        try:
            resolver = new_resolver()
            files = _lint_round(resolver, how)[1]
        except ConfigError as exc:
            click.echo(f"gradguard: error: {exc}", err=True)
        sys.stdout.flush()
        say("Watching for file changes.")
        watched = partial(_watched_paths, how, resolver, files, configs)
        wait_for_change(watched, snapshot(watched()))
        say("File change detected...")


def _watched_paths(how: _Round, resolver: Resolver | None, files: list[str], configs: list[str]) -> list[str]:
    """The files discovery finds now (new ones included), else the last round's, and the config files."""
    from gradguard.discovery import discover

    try:
        if resolver is not None:
            files = list(discover(how.paths, resolver, force_exclude=how.force_exclude).files)
    except ConfigError:
        pass
    return [*files, *configs]


@main.command()
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule of the catalogue.")
@click.option(
    "--output-format", type=click.Choice(("text", "json")), default="text", help="Rich text, or JSON for tools."
)
def rule(code: str | None, show_all: bool, output_format: str) -> None:
    """Show a rule's document, by code or name (`gradguard rule GG003`, `gradguard rule state-not-detached`),
    or the whole catalogue (`--all`)."""
    import json

    from gradguard import catalogue
    from gradguard.report.rule_doc import render_catalogue, render_rule, rule_json

    if not show_all and code is None:
        raise click.UsageError("give a rule code (e.g. GG001) or name, or --all")
    stdout = sys.stdout
    docs = list(catalogue.load().values())
    if not show_all:
        assert code is not None
        wanted = code.strip().lower()
        docs = [doc for doc in docs if wanted in (doc.code.lower(), doc.name)]
        if not docs:
            _fail(f"unknown rule code {code!r}, nor a rule name (`gradguard rule --all` lists them)")
    if output_format == "json":
        data = [rule_json(doc) for doc in docs]
        json.dump(data if show_all else data[0], stdout, indent=2, ensure_ascii=False)
        stdout.write("\n")
        return
    from rich.console import Console

    console = Console(file=stdout, no_color=not use_color(stdout), highlight=False)
    if show_all:
        if not stdout.isatty():
            # Piped, there is no width to fit: each rule stays on one line for a script or `less`, and
            # the padding of the table's last column is not written.
            import io

            buffer = io.StringIO()
            render_catalogue(docs, Console(file=buffer, no_color=True, highlight=False, width=10_000))
            stdout.writelines(line.rstrip() + "\n" for line in buffer.getvalue().splitlines())
            return
        render_catalogue(docs, console)
    else:
        render_rule(docs[0], console)


@main.command()
def clean() -> None:
    """Remove the cache folders (.gradguard_cache/) under the current folder, as `ruff clean` does."""
    import shutil

    from gradguard.cache import CACHE_DIR

    removed = 0
    for dirpath, dirnames, _ in os.walk(os.getcwd()):
        if CACHE_DIR in dirnames:
            folder = os.path.join(dirpath, CACHE_DIR)
            shutil.rmtree(folder, ignore_errors=True)
            click.echo(f"Removing cache at: {os.path.relpath(folder)}", err=True)
            removed += 1
        dirnames[:] = [name for name in dirnames if name not in (CACHE_DIR, ".git", "node_modules", ".venv")]
    if not removed:
        click.echo("No cache to remove.", err=True)


@main.command()
@click.argument("log", required=False, type=click.Path(dir_okay=False, allow_dash=True, path_type=str))
def explain(log: str | None) -> None:
    """Explain a double-backward or in-place error from a traceback or CI log (a file, or stdin)."""
    from gradguard.explain import explain as explain_log

    if log is None or log == "-":
        text = sys.stdin.read()
    else:
        try:
            text = Path(log).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            _fail(f"cannot read {log}: {exc.strerror or exc}")
    report, code = explain_log(text, Path.cwd())
    click.echo(report, nl=False)
    sys.exit(code)


@main.command()
def server() -> None:
    """Run the language server on stdin/stdout (for editors: VS Code, Neovim, Helix, Emacs)."""
    try:
        from gradguard.server.lsp import serve
    except ImportError as exc:
        _fail(f"the language server needs pygls ({exc}); install it with `pip install gradguard[server]`")
    serve()


@main.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option(
    "--report", "report_file", type=click.Path(dir_okay=False), help="Also write the diagnosis as JSON here."
)
@click.option(
    "--report-html",
    "report_html",
    type=click.Path(dir_okay=False),
    help="Also write the diagnosis as an HTML page with a picture of the failing graph.",
)
@click.option("-m", "module", metavar="MODULE", help="Run a module as `python -m MODULE` would.")
@click.option("--deep", is_flag=True, help="Also record creation sites and recent roots (slower, more exact).")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def run(
    report_file: str | None, report_html: str | None, module: str | None, deep: bool, args: tuple[str, ...]
) -> None:
    """Run a script (or `-m MODULE`) with the runtime monitor installed: `gradguard run train.py ARGS...`."""
    if module is not None:
        target, rest = module, list(args)
    elif args:
        target, rest = args[0], list(args[1:])
    else:
        raise click.UsageError("give a script to run, or -m MODULE")
    from gradguard.runtime.runner import run_program

    sys.exit(
        run_program(
            target, rest, module=module is not None, report=report_file, deep=deep, report_html=report_html
        )
    )
