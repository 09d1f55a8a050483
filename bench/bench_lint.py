"""Time `gradguard lint` on real PyTorch code against ruff and TorchFix, in one run, and print the ratios.

    python bench/bench_lint.py                      # all five corpora (fetched on first use)
    python bench/bench_lint.py --corpus lightning   # one of them
    python bench/bench_lint.py --dir mine=~/src/x   # any folder

For each corpus: `ruff check --select E9,F --no-cache`, `gradguard lint` cold (`--no-cache`, and with a
fresh cache folder) and warm (the cache filled), each the median of `--repeats` runs, every run a fresh
process from a scratch working folder; TorchFix on a fixed random sample of files (it spends about a
CPU-second per file), extrapolated per file to the corpus. Then the phases of gradguard's pipeline
measured in this process (how many files pass the prefilter and the ast screen and reach libcst, and
the seconds of each phase), and with `--profile` the top functions of the slowest corpus. See
bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path[:0] = [str(BENCH_DIR), str(REPO)]

import corpus as corpora  # noqa: E402
import phases  # noqa: E402

# The tools TorchFix needs clash with gradguard's (TorchFix 0.7 pins libcst < 1.6): they get a venv.
TOOL_PINS = ("ruff==0.17.5", "torchfix==0.7.0")
DEFAULT_TOOLS = BENCH_DIR / ".tools"
RUFF_ARGS = ("check", "--isolated", "--select", "E9,F", "--no-cache", "--extend-exclude", "*.pyi")
AIM_TORCHFIX_RATIO = 100.0
AIM_WARM_SECONDS = 0.3
# Issue 11: a warm lint within 2x of ruff's own warm run; `gradguard --version` within 2x of `python -c pass`.
AIM_WARM_RUFF_RATIO = 2.0
AIM_START_RATIO = 2.0


@dataclass(frozen=True)
class Run:
    """One timed process: wall and CPU seconds (its own and its children's), and what it printed."""

    wall: float
    cpu: float
    returncode: int
    stdout: str
    stderr: str


@dataclass
class Row:
    """Everything measured on one corpus."""

    corpus: corpora.Corpus
    ruff: list[Run] = field(default_factory=list)
    ruff_warm: list[Run] = field(default_factory=list)
    no_cache: list[Run] = field(default_factory=list)
    fresh_cache: list[Run] = field(default_factory=list)
    warm: list[Run] = field(default_factory=list)
    torchfix: Run | None = None
    torchfix_files: int = 0
    torchfix_bytes: int = 0
    gradguard_on_sample: Run | None = None
    findings: list[dict] = field(default_factory=list)
    file_errors: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    phase_report: phases.PhaseReport | None = None


def timed(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> Run:
    """Run `command` to the end and time it."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Run(wall, cpu, done.returncode, done.stdout, done.stderr)


def median_wall(runs: list[Run]) -> float:
    """The median wall time of some runs (NaN when there are none)."""
    return statistics.median(run.wall for run in runs) if runs else float("nan")


def gradguard_env() -> dict[str, str]:
    """The environment of a `gradguard lint` run: this checkout's package, no colour."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["NO_COLOR"] = "1"
    return env


def gradguard_command(paths: list[str], *, cache: bool) -> list[str]:
    """`gradguard lint` as the bench runs it: JSON findings, exit 0 when there are findings."""
    command = [sys.executable, "-m", "gradguard", "lint", "--exit-zero", "--output-format", "json", "-q"]
    if not cache:
        command.append("--no-cache")
    return command + paths


def ensure_tools(venv: Path) -> tuple[str, str]:
    """ruff and torchfix from their own venv, created with the pinned versions on first use."""
    ruff, torchfix = venv / "bin" / "ruff", venv / "bin" / "torchfix"
    if not (ruff.exists() and torchfix.exists()):
        print(f"setting up {', '.join(TOOL_PINS)} in {venv} ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *TOOL_PINS], check=True
        )
    return str(ruff), str(torchfix)


def tool_version(executable: str) -> str:
    """`TOOL --version`, first line."""
    done = subprocess.run([executable, "--version"], capture_output=True, text=True)
    return (done.stdout or done.stderr).strip().splitlines()[0] if (done.stdout or done.stderr) else "?"


def check_same_files(row: Row, ruff: str, scratch: Path) -> None:
    """ruff and gradguard must lint the same files; note any difference."""
    shown = subprocess.run(
        [ruff, *RUFF_ARGS, "--show-files", str(row.corpus.path)], cwd=scratch, capture_output=True, text=True
    ).stdout.split()
    ruff_files = {Path(name) for name in shown if name.endswith((".py", ".ipynb"))}
    ours = set(row.corpus.files)
    if ruff_files != ours:
        row.problems.append(
            f"ruff lints {len(ruff_files)} files, gradguard {len(ours)} "
            f"({len(ruff_files - ours)} only ruff, {len(ours - ruff_files)} only gradguard)"
        )


def file_errors(stderr: str) -> list[str]:
    """The per-file error lines gradguard printed (internal errors, parse failures, unreadable files)."""
    return [line for line in stderr.splitlines() if ": error: " in line]


def findings_of(run: Run, row: Row, what: str) -> list[dict]:
    """The JSON findings of a gradguard run; a run that failed is noted on the row."""
    if run.returncode != 0:
        row.problems.append(f"{what}: exit code {run.returncode}: {run.stderr.strip()[-300:]}")
    try:
        found = json.loads(run.stdout or "[]")
    except json.JSONDecodeError:
        row.problems.append(f"{what}: output is not JSON: {run.stdout[:200]!r}")
        return []
    return sorted(
        found, key=lambda d: (d["filename"], d["location"]["row"], d["location"]["column"], d["code"])
    )


def bench_corpus(row: Row, args: argparse.Namespace, ruff: str | None, torchfix: str | None) -> None:
    """Every timing of one corpus (fills `row`)."""
    target = [str(row.corpus.path)]
    env = gradguard_env()
    with tempfile.TemporaryDirectory(prefix="gradguard-bench-") as scratch_name:
        scratch = Path(scratch_name)
        if ruff is not None:
            check_same_files(row, ruff, scratch)
            row.ruff = [
                timed([ruff, *RUFF_ARGS, "--exit-zero", "--output-format", "json", *target], scratch)
                for _ in range(args.repeats)
            ]
            # ruff with its cache, filled by a first run, in a folder of its own.
            cached = [arg for arg in RUFF_ARGS if arg != "--no-cache"]
            ruff_folder = scratch / "ruff-warm"
            ruff_folder.mkdir()
            warm_ruff = [ruff, *cached, "--exit-zero", "--output-format", "json", *target]
            timed(warm_ruff, ruff_folder)
            row.ruff_warm = [timed(warm_ruff, ruff_folder) for _ in range(args.repeats)]
        row.no_cache = [
            timed(gradguard_command(target, cache=False), scratch, env) for _ in range(args.repeats)
        ]
        for index in range(args.repeats):
            # A fresh working folder per run: the cache lives at the project root, here that folder.
            fresh = scratch / f"fresh{index}"
            fresh.mkdir()
            row.fresh_cache.append(timed(gradguard_command(target, cache=True), fresh, env))
        warm_folder = scratch / f"fresh{args.repeats - 1}"
        row.warm = [
            timed(gradguard_command(target, cache=True), warm_folder, env) for _ in range(args.repeats)
        ]
        row.findings = findings_of(row.no_cache[0], row, "gradguard --no-cache")
        row.file_errors = file_errors(row.no_cache[0].stderr)
        for what, runs in (("fresh cache", row.fresh_cache), ("warm", row.warm)):
            if any(findings_of(run, row, what) != row.findings for run in runs):
                row.problems.append(f"gradguard {what} found other findings than --no-cache")
        if torchfix is not None and args.torchfix_sample > 0:
            sample = [str(path) for path in row.corpus.sample(args.torchfix_sample, args.seed)]
            row.torchfix_files = len(sample)
            row.torchfix_bytes = sum(os.path.getsize(path) for path in sample)
            row.torchfix = timed([torchfix, *sample], scratch)
            if row.torchfix.returncode not in (0, 1):
                row.problems.append(
                    f"torchfix: exit code {row.torchfix.returncode}: {row.torchfix.stderr[-300:]}"
                )
            row.gradguard_on_sample = timed(gradguard_command(sample, cache=False), scratch, env)
    if args.phases:
        row.phase_report = phases.measure(row.corpus.files)


def _fmt(seconds: float) -> str:
    if seconds != seconds:  # NaN: not measured
        return "-"
    return f"{seconds:.2f}" if seconds < 100 else f"{seconds:.0f}"


def _ratio(numerator: float, denominator: float) -> str:
    if numerator != numerator or denominator != denominator or denominator == 0:
        return "-"
    value = numerator / denominator
    return f"{value:.1f}x" if value < 1000 else f"{value:.0f}x"


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table (so the output can be pasted into the README as it is)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def torchfix_per_file(row: Row) -> float:
    """TorchFix's wall seconds per file on its sample (NaN when not run)."""
    if row.torchfix is None or not row.torchfix_files:
        return float("nan")
    return row.torchfix.wall / row.torchfix_files


def timing_table(rows: list[Row]) -> str:
    """The main table: wall seconds (medians) and the ratios the aims are stated in."""
    header = [
        "corpus",
        "files",
        "MB",
        "ruff",
        "gg cold --no-cache",
        "gg cold fresh cache",
        "gg warm",
        "ruff warm",
        "cold / ruff",
        "warm / ruff warm",
        "TorchFix s/file (sample)",
        "TorchFix extrapolated",
        "TorchFix / gg per file",
    ]
    table: list[list[str]] = []
    for row in rows:
        files = len(row.corpus.files)
        cold = median_wall(row.no_cache)
        per_file = torchfix_per_file(row)
        table.append(
            [
                row.corpus.label,
                str(files),
                f"{row.corpus.size / 1e6:.1f}",
                _fmt(median_wall(row.ruff)),
                _fmt(cold),
                _fmt(median_wall(row.fresh_cache)),
                _fmt(median_wall(row.warm)),
                _fmt(median_wall(row.ruff_warm)),
                _ratio(cold, median_wall(row.ruff)),
                _ratio(median_wall(row.warm), median_wall(row.ruff_warm)),
                f"{per_file:.2f} ({row.torchfix_files})" if per_file == per_file else "-",
                _fmt(per_file * files),
                _ratio(per_file, cold / files if files else float("nan")),
            ]
        )
    return markdown_table(header, table)


def sample_table(rows: list[Row]) -> str:
    """TorchFix and gradguard on the very same sampled files."""
    header = [
        "corpus",
        "sample files",
        "sample MB",
        "TorchFix wall",
        "TorchFix CPU",
        "gg --no-cache wall",
        "ratio",
    ]
    table = [
        [
            row.corpus.label,
            str(row.torchfix_files),
            f"{row.torchfix_bytes / 1e6:.2f}",
            _fmt(row.torchfix.wall),
            _fmt(row.torchfix.cpu),
            _fmt(row.gradguard_on_sample.wall),
            _ratio(row.torchfix.wall, row.gradguard_on_sample.wall),
        ]
        for row in rows
        if row.torchfix is not None and row.gradguard_on_sample is not None
    ]
    return markdown_table(header, table) if table else ""


def phase_table(rows: list[Row]) -> str:
    """Files through each gate, and seconds per phase (one process, no cache)."""
    header = ["corpus", "files", "pass prefilter", "pass ast screen (reach libcst)", *phases.PHASES, "total"]
    table = []
    for row in rows:
        report = row.phase_report
        if report is None:
            continue
        table.append(
            [
                row.corpus.label,
                str(report.files),
                str(report.prefiltered),
                str(report.screened),
                *(_fmt(report.seconds[name]) for name in phases.PHASES),
                _fmt(report.total),
            ]
        )
    return markdown_table(header, table) if table else ""


def aims(rows: list[Row]) -> list[str]:
    """Each aim of the lint issue, met or missed and by how much."""
    lines = []
    for row in rows:
        label = row.corpus.label
        cold, ruff, warm = median_wall(row.no_cache), median_wall(row.ruff), median_wall(row.warm)
        if ruff == ruff:
            verdict = (
                "met" if cold <= ruff else f"MISSED: {cold / ruff:.1f}x ruff's time (+{cold - ruff:.2f} s)"
            )
            lines.append(f"{label}: cold <= ruff ({_fmt(cold)} s vs {_fmt(ruff)} s): {verdict}")
        per_file = torchfix_per_file(row)
        files = len(row.corpus.files)
        if per_file == per_file and files:
            ratio = per_file / (cold / files)
            verdict = "met" if ratio >= AIM_TORCHFIX_RATIO else f"MISSED by {AIM_TORCHFIX_RATIO / ratio:.1f}x"
            lines.append(
                f"{label}: >= {AIM_TORCHFIX_RATIO:.0f}x faster than TorchFix per file "
                f"({ratio:.0f}x): {verdict}"
            )
        verdict = "met" if warm < AIM_WARM_SECONDS else f"MISSED by {warm - AIM_WARM_SECONDS:.2f} s"
        lines.append(f"{label}: warm < {AIM_WARM_SECONDS} s ({_fmt(warm)} s): {verdict}")
        ruff_warm = median_wall(row.ruff_warm)
        if ruff_warm == ruff_warm:
            ratio = warm / ruff_warm
            verdict = "met" if ratio <= AIM_WARM_RUFF_RATIO else f"MISSED: {ratio:.1f}x"
            lines.append(f"{label}: warm within {AIM_WARM_RUFF_RATIO:g}x of ruff's warm run ({ratio:.1f}x): {verdict}")
    return lines


def start_up(repeats: int) -> tuple[float, float, float, float]:
    """Median wall and CPU seconds of `python -c pass` and of `gradguard --version`, interleaved."""
    plain: list[Run] = []
    version: list[Run] = []
    here = Path.cwd()
    for _ in range(repeats):
        plain.append(timed([sys.executable, "-c", "pass"], here))
        version.append(timed([sys.executable, "-m", "gradguard", "--version"], here, gradguard_env()))
    return (
        median_wall(plain),
        statistics.median(run.cpu for run in plain),
        median_wall(version),
        statistics.median(run.cpu for run in version),
    )


def findings_summary(rows: list[Row]) -> list[str]:
    """Findings per corpus and code, file errors, and anything that went wrong."""
    lines = []
    for row in rows:
        codes = Counter(finding["code"] for finding in row.findings)
        by_code = ", ".join(f"{code} {count}" for code, count in sorted(codes.items())) or "none"
        lines.append(
            f"{row.corpus.label}: {len(row.findings)} findings ({by_code}); "
            f"{len(row.file_errors)} file errors"
        )
        lines += [f"    file error: {line}" for line in row.file_errors]
        lines += [f"    PROBLEM: {problem}" for problem in row.problems]
    return lines


def write_findings(rows: list[Row], path: Path) -> None:
    """Every finding and file error as JSON: {corpus: {"root", "findings", "file_errors"}}."""
    payload = {
        row.corpus.name: {
            "label": row.corpus.label,
            "root": str(row.corpus.path),
            "findings": row.findings,
            "file_errors": row.file_errors,
        }
        for row in rows
    }
    path.write_text(json.dumps(payload, indent=1) + "\n")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--corpus", action="append", choices=corpora.NAMES, help="a corpus (repeatable; default all)"
    )
    parser.add_argument(
        "--dir", action="append", default=[], metavar="NAME=PATH", help="bench any folder too"
    )
    parser.add_argument(
        "--corpus-root", type=Path, default=corpora.DEFAULT_ROOT, help="where wheels are unpacked"
    )
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement; the median is shown")
    parser.add_argument("--torchfix-sample", type=int, default=40, help="files per corpus TorchFix runs on")
    parser.add_argument("--seed", type=int, default=0, help="seed of the TorchFix sample")
    parser.add_argument(
        "--tools-venv", type=Path, default=DEFAULT_TOOLS, help="venv holding ruff and torchfix"
    )
    parser.add_argument("--ruff", help="ruff executable (default: the tools venv's)")
    parser.add_argument("--torchfix", help="torchfix executable (default: the tools venv's)")
    parser.add_argument("--no-torchfix", action="store_true", help="skip TorchFix")
    parser.add_argument("--no-phases", dest="phases", action="store_false", help="skip the phase breakdown")
    parser.add_argument(
        "--profile",
        nargs="?",
        const="slowest",
        metavar="CORPUS",
        help="cProfile the in-process pipeline on CORPUS (default: the slowest)",
    )
    parser.add_argument("--findings", type=Path, help="write every finding and file error to this JSON file")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    return args


def select_corpora(args: argparse.Namespace) -> list[corpora.Corpus]:
    """The corpora asked for (`--dir` alone means only those folders)."""
    chosen = []
    for spec in args.dir:
        name, separator, folder = spec.partition("=")
        if not separator or not name or not folder:
            raise SystemExit(f"--dir takes NAME=PATH, not {spec!r}")
        chosen.append(corpora.from_folder(name, Path(folder).expanduser()))
    names = args.corpus or ([] if chosen else list(corpora.NAMES))
    return [corpora.load(name, args.corpus_root) for name in names] + chosen


def main(argv: list[str] | None = None) -> int:
    """Run the bench and print its tables; 1 when a run failed or gradguard reported a file error."""
    args = parse_args(argv)
    chosen = select_corpora(args)
    ruff, torchfix = args.ruff, None if args.no_torchfix else args.torchfix
    if ruff is None or (torchfix is None and not args.no_torchfix):
        venv_ruff, venv_torchfix = ensure_tools(args.tools_venv)
        ruff = ruff or venv_ruff
        torchfix = None if args.no_torchfix else (torchfix or venv_torchfix)
    load_before = os.getloadavg()
    started = time.perf_counter()
    rows = []
    for item in chosen:
        print(f"benching {item.label} ({len(item.files)} files) ...", file=sys.stderr, flush=True)
        row = Row(item)
        bench_corpus(row, args, ruff, torchfix)
        rows.append(row)
    load_after = os.getloadavg()
    from gradguard import __version__

    print(
        f"gradguard {__version__} | {tool_version(ruff)} | "
        f"{tool_version(torchfix) if torchfix else 'TorchFix not run'} | Python {platform.python_version()}"
    )
    print(
        f"{os.cpu_count()} CPUs; load average (1/5/15 min) {'/'.join(f'{x:.2f}' for x in load_before)} "
        f"before, {'/'.join(f'{x:.2f}' for x in load_after)} after; "
        f"median of {args.repeats} runs; bench took {time.perf_counter() - started:.0f} s\n"
    )
    print(
        "Wall seconds. TorchFix ran on a fixed random sample of files per corpus (seed "
        f"{args.seed}); its per-file time is extrapolated to the whole corpus.\n"
    )
    print(timing_table(rows) + "\n")
    sample = sample_table(rows)
    if sample:
        print("TorchFix and gradguard (--no-cache) on the same sampled files:\n\n" + sample + "\n")
    phase = phase_table(rows)
    if phase:
        print(
            "Phases, in one process, no cache (CPU-bound seconds; `gradguard lint` spreads the files "
            "past the prefilter over worker processes):\n\n" + phase + "\n"
        )
        for row in rows:
            if row.phase_report is not None and row.phase_report.slowest:
                slowest = ", ".join(
                    f"{os.path.relpath(path, row.corpus.path)} {seconds:.2f} s"
                    for seconds, path in row.phase_report.slowest
                )
                print(f"slowest files past the screen, {row.corpus.label}: {slowest}")
        print()
    plain_wall, plain_cpu, version_wall, version_cpu = start_up(args.repeats)
    ratio = version_wall / plain_wall
    verdict = "met" if ratio <= AIM_START_RATIO else f"MISSED: {ratio:.1f}x"
    start_line = (
        f"start-up: `gradguard --version` {_fmt(version_wall)} s wall ({version_cpu:.2f} CPU-s), `python -c pass` "
        f"{_fmt(plain_wall)} s ({plain_cpu:.2f} CPU-s): within {AIM_START_RATIO:g}x ({ratio:.1f}x): {verdict}"
    )
    print("Aims:\n" + "\n".join(f"  {line}" for line in [*aims(rows), start_line]) + "\n")
    print("Findings:\n" + "\n".join(f"  {line}" for line in findings_summary(rows)))
    if args.findings is not None:
        write_findings(rows, args.findings)
        print(f"\nall findings written to {args.findings}")
    if args.profile is not None:
        print_profile(rows, args.profile)
    failed = any(row.problems or row.file_errors for row in rows)
    return 1 if failed else 0


def print_profile(rows: list[Row], which: str) -> None:
    """cProfile of the in-process pipeline on one corpus."""
    if which == "slowest":
        measured = [row for row in rows if row.phase_report is not None] or rows
        row = max(measured, key=lambda r: r.phase_report.total if r.phase_report else median_wall(r.no_cache))
    else:
        matching = [row for row in rows if row.corpus.name == which]
        if not matching:
            raise SystemExit(f"--profile {which}: not among the corpora benched")
        row = matching[0]
    print(f"\nProfile of the pipeline on {row.corpus.label} (one process, cProfile adds overhead):\n")
    print(phases.profile(row.corpus.files))


if __name__ == "__main__":
    sys.exit(main())
