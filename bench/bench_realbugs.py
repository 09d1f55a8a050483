"""Recall of `gradguard lint` on real bugs from public git history (bench/realbugs.toml).

    python bench/bench_realbugs.py [--mirror /work/.mirror] [--only ID ...] [--json out.json]

Each entry of the manifest names a public repository, the commit before a fix (buggy) and the fix
commit, the file to lint (the training loop or model that drives the failing backward), and the
failing line: the backward / autograd.grad call that raises (or, where the repository hid the error
with retain_graph=True, the call that would raise); `error` names the RuntimeError: freed-graph
("backward through the graph a second time") or in-place (a tensor the graph saved was modified, as
by an optimizer step between two backwards through one retained graph). The repositories are read
from local bare mirrors (`fetch github:OWNER/NAME` puts them under /work/.mirror/OWNER+NAME/);
nothing is fetched here. For each entry and each of its two commits, the repository's Python files
and notebooks are written into a temporary folder, keeping the repository's layout, and
`python -m gradguard lint --no-cache --output-format json` runs on the entry's file with the project
folder as the working directory (so that imports of sibling modules resolve).

Verdicts at the buggy commit:
- line: an error-level finding within +-2 lines of the failing line (same file), or of one of the
  entry's call sites (the line of the linted file through which a backward in another file is reached);
- elsewhere: error-level findings in the linted file, none at the failing line;
- missed: no error-level finding in the linted file.
At the fix commit, every error-level finding in the linted file is counted as a false positive; a
`line` verdict whose finding is still reported at the failing line after the fix is marked `line*`
(found, but not because of the cause the fix removed).
Recall (verdict `line`) is printed overall and split into single-file and multi-file entries
(multi-file: the entry's cause involves more than one file of the repository).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
MANIFEST = BENCH_DIR / "realbugs.toml"
DEFAULT_MIRROR = Path("/work/.mirror")
LINE_SLACK = 2
LINT_TIMEOUT_S = 300


@dataclass(frozen=True)
class Location:
    """A path inside a repository and a 1-based line (in a notebook: a 1-based cell and its line)."""

    path: str
    line: int
    cell: int | None = None

    @classmethod
    def parse(cls, text: str) -> Location:
        """Read `path/to/file.py:123`, or `path/to/notebook.ipynb:cell 13:177` (gradguard's form)."""
        head, _, line = text.rpartition(":")
        path, sep, cell = head.rpartition(":cell ")
        if sep:
            return cls(path, int(line), int(cell))
        return cls(head, int(line))


@dataclass(frozen=True)
class Bug:
    """One manifest entry."""

    id: str
    repo: str
    buggy: str
    fix: str
    lint: str
    failing: Location
    call_sites: tuple[Location, ...]
    files: tuple[str, ...]
    family: str
    error: str  # freed-graph (backward through a freed graph) or in-place (a saved tensor modified)
    project_root: str
    import_roots: tuple[str, ...]
    masked_by_retain_graph: bool

    @property
    def multi_file(self) -> bool:
        """Whether the cause involves more than one file of the repository."""
        return len(self.files) > 1

    @property
    def targets(self) -> tuple[Location, ...]:
        """The locations where a finding counts as found at the failing line."""
        return (self.failing, *self.call_sites)


@dataclass
class Outcome:
    """What gradguard reported for one entry."""

    bug: Bug
    verdict: str = "skipped"  # line / elsewhere / missed / skipped / error
    persists: bool = False  # the finding at the failing line is reported at the fix commit too
    buggy_codes: list[str] = field(default_factory=list)
    fix_errors: list[str] = field(default_factory=list)
    note: str = ""


def load_manifest(path: Path) -> list[Bug]:
    """The entries of the manifest, in file order."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    bugs = []
    for raw in data["bug"]:
        bugs.append(
            Bug(
                id=raw["id"],
                repo=raw["repo"],
                buggy=raw["buggy"],
                fix=raw["fix"],
                lint=raw["lint"],
                failing=Location.parse(raw["failing"]),
                call_sites=tuple(Location.parse(text) for text in raw.get("call_sites", [])),
                files=tuple(raw["files"]),
                family=raw["family"],
                error=raw.get("error", "freed-graph"),
                project_root=raw.get("project_root", ""),
                import_roots=tuple(raw.get("import_roots", [])),
                masked_by_retain_graph=bool(raw.get("masked_by_retain_graph", False)),
            )
        )
    return bugs


def git_dir(mirror: Path, repo: str) -> Path | None:
    """The bare git directory `fetch` left for `repo`, if any."""
    base = mirror / repo.replace("/", "+") / "repo"
    for candidate in (base / ".git", base):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    return None


def git(gdir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run git on a bare mirror."""
    return subprocess.run(["git", f"--git-dir={gdir}", *args], capture_output=True, check=False)


def has_commit(gdir: Path, commit: str) -> bool:
    """Whether the mirror holds `commit`."""
    return git(gdir, "cat-file", "-e", f"{commit}^{{commit}}").returncode == 0


def materialise(gdir: Path, commit: str, into: Path) -> None:
    """Write the Python files and notebooks of `commit` into `into`, keeping the repository's layout."""
    listing = git(gdir, "ls-tree", "-r", "-z", commit)
    if listing.returncode != 0:
        raise RuntimeError(listing.stderr.decode("utf-8", "replace").strip())
    blobs: list[tuple[str, str]] = []
    for record in listing.stdout.split(b"\0"):
        meta, _, raw_path = record.partition(b"\t")
        fields = meta.split()
        path = raw_path.decode("utf-8", "replace")
        if len(fields) == 3 and fields[1] == b"blob" and path.endswith((".py", ".ipynb")):
            blobs.append((fields[2].decode(), path))
    # One `cat-file --batch` for all blobs; snapshots lack some large files, which are skipped.
    request = "".join(f"{sha}\n" for sha, _ in blobs).encode()
    out = subprocess.run(["git", f"--git-dir={gdir}", "cat-file", "--batch"], input=request,
                         capture_output=True, check=False).stdout
    pos = 0
    for _, path in blobs:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) != 3:
            continue  # "<sha> missing"
        size = int(header[2])
        target = into / path
        if ".." not in Path(path).parts:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(out[pos:pos + size])
        pos += size + 1


def lint(project: Path, file: Path, import_roots: tuple[Path, ...] = ()) -> list[dict[str, Any]]:
    """gradguard's findings (JSON) for `file`, run from `project`.

    `import_roots` (a src/ layout's folder, say) are appended to PYTHONPATH: gradguard never imports
    the project, but an analysis that resolves imports the way Python does can find them there.
    """
    env = dict(os.environ)
    paths = [str(REPO_ROOT), *map(str, import_roots), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
    done = subprocess.run(
        # -P: the project folder (the working directory) must not shadow gradguard's own imports.
        [sys.executable, "-P", "-m", "gradguard", "lint", "--no-cache", "--exit-zero", "-q",
         "--output-format", "json", str(file.relative_to(project))],
        cwd=project, env=env, capture_output=True, text=True, timeout=LINT_TIMEOUT_S, check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"gradguard exited with {done.returncode}: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout or "[]")


def lint_commit(gdir: Path, bug: Bug, commit: str, *, required: bool) -> list[dict[str, Any]]:
    """gradguard's findings for the entry's file at `commit`, each with `path` relative to the repository.

    A missing file is an error when `required` (the buggy commit), no findings otherwise (a fix may
    move or delete the file).
    """
    with tempfile.TemporaryDirectory(prefix="gg-realbug-") as folder:
        root = Path(folder).resolve()
        materialise(gdir, commit, root)
        target = root / bug.lint
        if not target.is_file():
            if required:
                raise RuntimeError(f"{bug.lint} is not in {commit[:10]}")
            return []
        findings = lint(root / bug.project_root, target, tuple(root / r for r in bug.import_roots))
        for finding in findings:
            finding["path"] = str(Path(finding["filename"]).resolve().relative_to(root))
        return findings


def label(finding: dict[str, Any]) -> str:
    """`GG003@47`, or `GG003@c13:177` for a notebook cell."""
    cell = finding.get("cell")
    where = f"c{cell}:" if cell is not None else ""
    return f"{finding['code']}@{where}{finding['location']['row']}"


def near(finding: dict[str, Any], targets: tuple[Location, ...]) -> bool:
    """Whether the finding sits within LINE_SLACK lines of one of the targets (same notebook cell)."""
    row = finding["location"]["row"]
    cell = finding.get("cell")
    return any(
        t.path == finding["path"] and t.cell == cell and abs(row - t.line) <= LINE_SLACK for t in targets
    )


def evaluate(bug: Bug, mirror: Path) -> Outcome:
    """Lint the entry at its buggy and fix commits and classify what was found."""
    outcome = Outcome(bug)
    gdir = git_dir(mirror, bug.repo)
    if gdir is None:
        outcome.note = f"no mirror: fetch github:{bug.repo}"
        return outcome
    missing = [c for c in (bug.buggy, bug.fix) if not has_commit(gdir, c)]
    if missing:
        outcome.note = f"mirror lacks {', '.join(c[:10] for c in missing)}: fetch github:{bug.repo} again"
        return outcome
    try:
        findings = lint_commit(gdir, bug, bug.buggy, required=True)
        errors = [f for f in findings if f["severity"] == "error"]
        outcome.buggy_codes = [label(f) for f in findings]
        if any(near(f, bug.targets) for f in errors):
            outcome.verdict = "line"
        elif errors:
            outcome.verdict = "elsewhere"
        else:
            outcome.verdict = "missed"
        fix_errors = [f for f in lint_commit(gdir, bug, bug.fix, required=False) if f["severity"] == "error"]
        outcome.fix_errors = [label(f) for f in fix_errors]
        outcome.persists = outcome.verdict == "line" and any(near(f, bug.targets) for f in fix_errors)
    except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError, OSError) as exc:
        outcome.verdict = "error"
        outcome.note = str(exc)[:300]
    return outcome


def recall(outcomes: list[Outcome]) -> str:
    """`found/run (percent)` over the entries that ran."""
    ran = [o for o in outcomes if o.verdict not in {"skipped", "error"}]
    found = sum(o.verdict == "line" for o in ran)
    share = f" ({100 * found / len(ran):.0f}%)" if ran else ""
    return f"{found}/{len(ran)}{share}"


def report(outcomes: list[Outcome]) -> None:
    """Print the per-entry table, the recall figures and the fetch calls still needed."""
    header = f"{'id':<44} {'family':<40} {'files':<6} {'verdict':<10} {'findings at buggy':<28} fix-commit errors"
    print(header)
    print("-" * len(header))
    for o in outcomes:
        kind = "multi" if o.bug.multi_file else "single"
        family = o.bug.family + (" (masked)" if o.bug.masked_by_retain_graph else "")
        codes = ",".join(o.buggy_codes) or "-"
        fixes = ",".join(o.fix_errors) or "-"
        verdict = o.verdict + ("*" if o.persists else "")
        line = f"{o.bug.id:<44} {family:<40} {kind:<6} {verdict:<10} {codes:<28} {fixes}"
        print(line + (f"  [{o.note}]" if o.note else ""))
    print()
    single = [o for o in outcomes if not o.bug.multi_file]
    multi = [o for o in outcomes if o.bug.multi_file]
    print(f"recall (error at the failing line): all {recall(outcomes)}, "
          f"single-file {recall(single)}, multi-file {recall(multi)}")
    kinds = sorted({o.bug.error for o in outcomes})
    print("by error: " + ", ".join(f"{k} {recall([o for o in outcomes if o.bug.error == k])}" for k in kinds))
    masked = [o for o in outcomes if o.bug.masked_by_retain_graph]
    print(f"hidden by retain_graph=True: {recall(masked)}")
    ran = [o for o in outcomes if o.verdict not in {"skipped", "error"}]
    for verdict in ("elsewhere", "missed"):
        print(f"{verdict}: {sum(o.verdict == verdict for o in ran)}")
    persisting = sum(o.persists for o in ran)
    print(f"line*: {persisting} of the entries found at the line are reported there at the fix commit too "
          "(the finding does not depend on the cause the fix removed)")
    fps = [o for o in ran if o.fix_errors]
    print(f"entries with an error-level finding at the fix commit: {len(fps)}/{len(ran)}")
    needed = sorted({o.bug.repo for o in outcomes if o.verdict == "skipped"})
    if needed:
        print("skipped, mirrors needed (call fetch for each):")
        for repo in needed:
            print(f"  fetch github:{repo}")
    failed = [o for o in outcomes if o.verdict == "error"]
    if failed:
        print(f"entries that could not be linted: {', '.join(o.bug.id for o in failed)}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--manifest", type=Path, default=MANIFEST, help="the TOML manifest")
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR, help="where fetch put the mirrors")
    parser.add_argument("--only", nargs="+", metavar="ID", help="run only these entries")
    parser.add_argument("--json", type=Path, help="also write every outcome to this file")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the bench; exit 1 when an entry could not be linted."""
    args = parse_args(argv)
    bugs = load_manifest(args.manifest)
    if args.only:
        unknown = set(args.only) - {b.id for b in bugs}
        if unknown:
            print(f"unknown ids: {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        bugs = [b for b in bugs if b.id in args.only]
    outcomes = [evaluate(bug, args.mirror) for bug in bugs]
    report(outcomes)
    if args.json:
        rows = [
            {"id": o.bug.id, "repo": o.bug.repo, "family": o.bug.family, "error": o.bug.error,
             "multi_file": o.bug.multi_file,
             "verdict": o.verdict, "persists_after_fix": o.persists, "buggy_findings": o.buggy_codes,
             "fix_errors": o.fix_errors, "note": o.note}
            for o in outcomes
        ]
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 1 if any(o.verdict == "error" for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
