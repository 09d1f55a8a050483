"""Lint a pinned corpus of real, correct PyTorch training code and list what gradguard reports on it.

    python bench/bench_realcode.py                          # every repository of bench/realcode.toml
    python bench/bench_realcode.py --repo salesforce/awd-lstm-lm --repo davda54/sam
    python bench/bench_realcode.py --json found.json        # also every finding, as JSON

The code is correct, so every finding is a false positive until someone judges it true
(bench/realcode_verdicts.md). Each repository is read at its pinned commit from a bare git mirror
(`<mirrors>/<owner>+<name>/repo`, as the session tool `fetch` leaves it): `git archive` into a
temporary folder, then one `gradguard lint --no-cache --exit-zero --output-format json -q FILE...` on
the training code named in the TOML, run with the repository root as working folder. Nothing fetched
is kept or committed. A repository whose mirror or commit is missing is named and skipped.
"""

from __future__ import annotations

import argparse
import fnmatch
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(REPO))

from gradguard import catalogue  # noqa: E402

DEFAULT_CONFIG = BENCH_DIR / "realcode.toml"
DEFAULT_MIRRORS = Path(os.environ.get("GRADGUARD_MIRRORS", "/work/.mirror"))
# Besides Python sources, what a lint run may read from the tree: its configuration and ignore files.
KEPT_NAMES = {"pyproject.toml", "setup.cfg", ".gitignore"}
SOURCES = (".py", ".ipynb")


@dataclass(frozen=True)
class Entry:
    """One repository of the corpus: where its training code is, at which commit."""

    name: str
    commit: str
    family: str
    paths: tuple[str, ...]
    exclude: tuple[str, ...]


@dataclass
class Result:
    """What one repository's lint run produced."""

    entry: Entry
    files: int = 0
    seconds: float = 0.0
    findings: list[dict] = field(default_factory=list)
    file_errors: list[str] = field(default_factory=list)
    problem: str | None = None


def load_entries(path: Path) -> list[Entry]:
    """The repositories of a corpus TOML file, with the defaults applied."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    defaults = data.get("defaults", {})
    entries = []
    for raw in data.get("repo", []):
        entries.append(
            Entry(
                name=raw["name"],
                commit=raw["commit"],
                family=raw.get("family", "?"),
                paths=tuple(raw.get("paths", defaults.get("paths", ["."]))),
                exclude=tuple(defaults.get("exclude", [])) + tuple(raw.get("exclude", [])),
            )
        )
    return entries


def git_dir(mirrors: Path, name: str) -> Path | None:
    """The git directory of a repository's mirror (bare, or a clone's .git), or None when absent."""
    base = mirrors / name.replace("/", "+") / "repo"
    for candidate in (base / ".git", base):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    return None


def has_commit(git: Path, commit: str) -> bool:
    """Whether the mirror holds that commit."""
    done = subprocess.run(
        ["git", "--git-dir", str(git), "cat-file", "-e", f"{commit}^{{commit}}"],
        capture_output=True, check=False,
    )
    return done.returncode == 0


def materialise(git: Path, commit: str, into: Path) -> None:
    """Write the repository's Python sources and lint configuration at `commit` under `into`.

    Only those files are archived: a mirror may lack the blobs of large data files.
    """
    listing = subprocess.run(
        ["git", "--git-dir", str(git), "ls-tree", "-r", "-z", commit],
        capture_output=True, text=True, check=True,
    ).stdout.split("\0")
    blobs = {}
    for line in listing:
        meta, _, name = line.partition("\t")
        if name and (name.endswith(SOURCES) or PurePosixPath(name).name in KEPT_NAMES):
            blobs[name] = meta.split()[-1]
    # A snapshot may lack some blobs even of source files (a large notebook): those are left out.
    present = subprocess.run(
        ["git", "--git-dir", str(git), "cat-file", "--batch-check"],
        input="".join(f"{sha}\n" for sha in blobs.values()), capture_output=True, text=True, check=True,
    ).stdout.splitlines()
    wanted = [name for name, answer in zip(blobs, present, strict=True) if not answer.endswith(" missing")]
    if not wanted:
        return
    archive = subprocess.run(
        ["git", "--literal-pathspecs", "--git-dir", str(git), "archive", "--format=tar", commit, "--", *wanted],
        capture_output=True, check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, members=[m for m in tar.getmembers() if m.isfile()], filter="data")


def excluded(relative: str, patterns: tuple[str, ...]) -> bool:
    """Whether a POSIX path relative to the repository root matches an exclude pattern."""
    return any(fnmatch.fnmatchcase(relative, pattern) for pattern in patterns)


def training_files(root: Path, entry: Entry) -> list[str]:
    """The entry's Python files and notebooks, relative to `root`, sorted, without the excluded ones."""
    found: set[str] = set()
    for spec in entry.paths:
        start = root / spec
        if start.is_file():
            found.add(PurePosixPath(start.relative_to(root).as_posix()).as_posix())
            continue
        for directory, subdirs, names in os.walk(start):
            subdirs[:] = [d for d in subdirs if d not in {".git", "__pycache__"}]
            for name in names:
                if name.endswith(SOURCES):
                    found.add(Path(directory, name).relative_to(root).as_posix())
    return sorted(f for f in found if not excluded(f, entry.exclude))


def lint(root: Path, files: list[str]) -> tuple[subprocess.CompletedProcess[str], float]:
    """One cold `gradguard lint` of `files` from `root`, with this checkout's gradguard; and its seconds."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["NO_COLOR"] = "1"
    command = [sys.executable, "-m", "gradguard", "lint", "--no-cache", "--exit-zero"]
    command += ["--output-format", "json", "-q", *files]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=False)
    return done, time.perf_counter() - start


def run_entry(entry: Entry, mirrors: Path) -> Result:
    """Materialise one repository and lint its training code."""
    result = Result(entry)
    git = git_dir(mirrors, entry.name)
    if git is None:
        result.problem = "no mirror"
        return result
    if not has_commit(git, entry.commit):
        result.problem = f"mirror lacks commit {entry.commit[:12]}"
        return result
    with tempfile.TemporaryDirectory(prefix="gg-realcode-") as scratch:
        root = Path(scratch, "repo")
        root.mkdir()
        materialise(git, entry.commit, root)
        files = training_files(root, entry)
        result.files = len(files)
        if not files:
            result.problem = "no Python file in paths"
            return result
        done, result.seconds = lint(root, files)
        result.file_errors = [line for line in done.stderr.splitlines() if ": error: " in line]
        if done.returncode != 0 and not (done.returncode == 2 and result.file_errors):
            result.problem = f"exit code {done.returncode}: {done.stderr.strip()[-300:]}"
        try:
            found = json.loads(done.stdout or "[]")
        except json.JSONDecodeError:
            result.problem = f"output is not JSON: {done.stdout[:200]!r}"
            found = []
        for finding in found:
            finding["filename"] = Path(finding["filename"]).resolve().relative_to(root.resolve()).as_posix()
        result.findings = sorted(found, key=lambda d: (d["filename"], d["location"]["row"], d["code"]))
    return result


def severity(code: str) -> str:
    """A rule's severity, from its document ("file-error" for a file gradguard could not analyse,
    "note" for a part of a file it did not follow to the end)."""
    if code == "file-error":
        return code
    if code == "analysis-incomplete":
        return "note"
    try:
        return catalogue.get(code).severity.value
    except KeyError:
        return "?"


def where(finding: dict) -> str:
    """`path:line`, or `path[cell N]:line` in a notebook."""
    cell = f"[cell {finding['cell']}]" if finding.get("cell") is not None else ""
    return f"{finding['filename']}{cell}:{finding['location']['row']}"


def table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def report(results: list[Result], list_warnings: bool) -> str:
    """The printed report: per repository, per rule and severity, each finding, the file errors."""
    out: list[str] = []
    ran = [r for r in results if r.problem is None or r.findings or r.files]
    rows = []
    for r in results:
        counts = Counter(severity(f["code"]) for f in r.findings)
        rows.append(
            [
                r.entry.name,
                r.entry.family,
                str(r.files),
                str(counts["error"]),
                str(counts["warning"]),
                str(len(r.file_errors)),
                f"{r.seconds:.1f}",
                r.problem or "",
            ]
        )
    header = ["repository", "family", "files", "errors", "warnings", "file errors", "seconds", "problem"]
    out += ["## Per repository", "", table(header, rows), ""]
    findings = [(r, f) for r in ran for f in r.findings]
    per_rule = Counter((f["code"], severity(f["code"])) for _, f in findings)
    out += ["## Per rule", ""]
    out += [table(["code", "severity", "findings"], [[c, s, str(n)] for (c, s), n in sorted(per_rule.items())])]
    total_files = sum(r.files for r in ran)
    total_seconds = sum(r.seconds for r in ran)
    by_severity = Counter(severity(f["code"]) for _, f in findings)
    out += [
        "",
        (
            f"{len(ran)} repositories, {total_files} files, {by_severity['error']} errors, "
            f"{by_severity['warning']} warnings, {sum(len(r.file_errors) for r in ran)} file errors, "
            f"{by_severity['note']} notes (analysis incomplete), {total_seconds:.1f} s of lint"
        ),
        "",
    ]
    shown = {"error", "?"} | ({"warning"} if list_warnings else set())
    findings = [(r, f) for r, f in findings if f["code"] != "file-error"]
    listed = [(r, f) for r, f in findings if severity(f["code"]) in shown]
    out += ["## Findings listed (" + ", ".join(sorted(shown - {"?"})) + ")", ""]
    out += [
        table(
            ["repository", "path:line", "code", "message"],
            [
                [r.entry.name, where(f), f["code"], f["message"].replace("|", "\\|")]
                for r, f in listed
            ],
        ),
        "",
    ]
    errors = [(r, line) for r in ran for line in r.file_errors]
    out += ["## File errors", ""] + [f"- {r.entry.name}: {line}" for r, line in errors] + [""]
    missing = [r for r in results if r.problem in {"no mirror"} or (r.problem or "").startswith("mirror lacks")]
    if missing:
        out += ["## Skipped: fetch these first", ""]
        out += [f"- github:{r.entry.name} ({r.problem}; wants {r.entry.commit})" for r in missing] + [""]
    return "\n".join(out)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG, help="corpus TOML (default: %(default)s)")
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS, help="mirror folder (default: %(default)s)")
    parser.add_argument("--repo", action="append", default=[], help="only this owner/name (repeatable)")
    parser.add_argument("--json", type=Path, help="write every finding and file error here")
    parser.add_argument("--no-warnings", action="store_true", help="list error-level findings only")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the corpus; exit 1 when a lint run failed or reported a file error."""
    args = parse_args(argv)
    entries = load_entries(args.config)
    if args.repo:
        unknown = set(args.repo) - {e.name for e in entries}
        if unknown:
            print(f"not in {args.config}: {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        entries = [e for e in entries if e.name in args.repo]
    results = []
    for entry in entries:
        result = run_entry(entry, args.mirrors)
        print(f"{entry.name}: {result.files} files, {len(result.findings)} findings, "
              f"{result.seconds:.1f} s {result.problem or ''}", file=sys.stderr, flush=True)
        results.append(result)
    print(report(results, not args.no_warnings))
    if args.json:
        dump = [
            {
                "repo": r.entry.name,
                "commit": r.entry.commit,
                "files": r.files,
                "seconds": round(r.seconds, 2),
                "problem": r.problem,
                "file_errors": r.file_errors,
                "findings": r.findings,
            }
            for r in results
        ]
        args.json.write_text(json.dumps(dump, indent=1), encoding="utf-8")
    failed = any(r.file_errors or (r.problem or "").startswith(("exit code", "output")) for r in results)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
