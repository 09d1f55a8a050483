"""Recall and false positives of `gradguard lint` on a held-out corpus of small training programs.

    python bench/bench_heldout.py                      # lint every case (buggy and fixed) and every clean program
    python bench/bench_heldout.py --only ID [ID ...]   # some cases / clean programs
    python bench/bench_heldout.py --json out.json      # also every verdict and finding
    python bench/bench_heldout.py --fix                # also: apply gradguard's fixes to buggy/ and run the result
    python bench/bench_heldout.py --verify [--record]  # run the programs themselves (no gradguard)

The corpus, bench/heldout/, was written without looking at gradguard's analysis or rules, from the
shapes of real bug reports (each case's `inspired_by`). `cases/<id>/` holds a program that raises
PyTorch's "Trying to backward through the graph a second time" (freed-graph) or "one of the variables
needed for gradient computation has been modified by an inplace operation" (in-place) error
(`buggy/`), the same program with the idiomatic fix (`fixed/`) and `case.toml`: the family, the error,
`failing` (`relpath:line` of the backward / autograd.grad call that raises, the last frame of the
traceback inside the program's files), optional `call_sites` (where the program reaches a helper
whose backward raises), the cause, the fix and its kind, the expression holding the stale graph
(`carrier`), the layout, and the fixed program's printed line (`expected_output`). `clean/<id>/`
holds correct programs of the same shapes (`program/`), which must not get error-level findings.

Lint verdicts (gradguard runs from inside a temporary copy of the program's folder:
`python -m gradguard lint --no-cache --output-format json .`):
- buggy: `line` (an error-level finding at the failing file, within +-2 lines of the failing line
  or of a call site), `elsewhere` (error-level findings, none there), `missed` (none);
- fixed and clean: every error-level finding is a false positive (`line*` marks a fixed program
  still flagged at the failing line).
With --fix, `gradguard lint --fix --unsafe-fixes` runs on a copy of buggy/, then that program runs:
`same` (prints the hand-fixed program's line), `different` (prints another line), `crashed` (the
error is printed), `no-edit` (gradguard changed nothing; the program still fails).
--verify checks the corpus itself: each buggy program raises the stated error at `failing`, each
fixed and clean program runs to completion (--record writes its printed line as `expected_output`).
The exit code is 0 whatever the recall (a measurement); 1 only when --verify finds a broken case.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
CORPUS = BENCH_DIR / "heldout"
LINE_SLACK = 2
LINT_TIMEOUT_S = 120
RUN_TIMEOUT_S = 60
MESSAGES = {
    "freed-graph": "Trying to backward through the graph a second time",
    "in-place": "one of the variables needed for gradient computation has been modified by an inplace operation",
}
FRAME_RE = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)', re.M)


@dataclass
class Item:
    id: str
    kind: str  # "case" or "clean"
    dir: Path
    meta: dict[str, Any]

    @property
    def programs(self) -> dict[str, Path]:
        if self.kind == "case":
            return {"buggy": self.dir / "buggy", "fixed": self.dir / "fixed"}
        return {"clean": self.dir / "program"}


@dataclass
class Finding:
    file: str
    row: int
    code: str
    severity: str
    message: str


@dataclass
class Result:
    item: Item
    verdict: str = ""
    findings: dict[str, list[Finding]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    fix_outcome: str = ""
    fix_detail: str = ""


def load_items(only: list[str] | None, corpus: Path = CORPUS) -> list[Item]:
    items = []
    for kind, sub in (("case", "cases"), ("clean", "clean")):
        for toml_path in sorted((corpus / sub).glob("*/case.toml")):
            meta = tomllib.loads(toml_path.read_text())
            item = Item(toml_path.parent.name, kind, toml_path.parent, meta)
            if only and item.id not in only:
                continue
            items.append(item)
    return items


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # one thread: the programs are tiny, and torch's thread pool on a loaded machine costs seconds
    env["OMP_NUM_THREADS"] = "1"
    env["MKL_NUM_THREADS"] = "1"
    return env


def _copy(src: Path, dest_root: Path) -> Path:
    dest = dest_root / "project"
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__", ".gradguard_cache"))
    return dest


def _files_of(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): p.read_text()
        for p in sorted(folder.rglob("*.py"))
        if "__pycache__" not in p.parts
    }


def lint(folder: Path, extra: list[str] | None = None, cwd: Path | None = None) -> tuple[list[Finding], str]:
    """Lint a copy of `folder` (or `cwd`, already a copy); the error-level and other findings, and stderr."""
    with tempfile.TemporaryDirectory(prefix="gg-heldout-") as tmp:
        work = cwd or _copy(folder, Path(tmp))
        cmd = [sys.executable, "-m", "gradguard", "lint", "--no-cache", "--output-format", "json",
               "--exit-zero", "-q", *(extra or []), "."]
        proc = subprocess.run(cmd, cwd=work, env=_env(), capture_output=True, text=True, timeout=LINT_TIMEOUT_S)
        out = proc.stdout.strip()
        findings = []
        problem = ""
        if proc.returncode != 0:
            problem = f"lint exited {proc.returncode}: {proc.stderr.strip()[-400:]}"
        try:
            raw = json.loads(out) if out else []
        except json.JSONDecodeError:
            raw = []
            problem = problem or f"unreadable lint output: {out[:200]}"
        real_work = work.resolve()
        for f in raw:
            name = f.get("filename") or ""
            try:
                rel = str(Path(name).resolve().relative_to(real_work))
            except ValueError:
                rel = name
            findings.append(Finding(rel, int((f.get("location") or {}).get("row") or 0), f.get("code", ""),
                                    f.get("severity", ""), f.get("message", "")))
        return findings, problem


def _near(f: Finding, target: str) -> bool:
    rel, _, line = target.rpartition(":")
    return f.file == rel and abs(f.row - int(line)) <= LINE_SLACK


def run_program(folder: Path) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-B", "train.py"], cwd=folder, env=_env(), capture_output=True,
                          text=True, timeout=RUN_TIMEOUT_S)
    return proc.returncode, proc.stdout, proc.stderr


def _last_line(text: str) -> str:
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1].strip() if lines else ""


def raising_frame(stderr: str, root: Path) -> str | None:
    """`relpath:line` of the last traceback frame inside `root`."""
    root_s = str(root.resolve())
    last = None
    for m in FRAME_RE.finditer(stderr):
        path = str(Path(m["path"]).resolve())
        if path.startswith(root_s + os.sep):
            last = f"{os.path.relpath(path, root_s)}:{m['line']}"
    return last


# ----------------------------------------------------------------------------------------- lint bench


def bench_item(item: Item, do_fix: bool) -> Result:
    res = Result(item)
    for name, folder in item.programs.items():
        findings, problem = lint(folder)
        res.findings[name] = findings
        if problem:
            res.errors.append(f"{name}: {problem}")
    if item.kind == "case":
        targets = [item.meta["failing"], *item.meta.get("call_sites", [])]
        errs = [f for f in res.findings["buggy"] if f.severity == "error"]
        if any(_near(f, t) for f in errs for t in targets):
            res.verdict = "line"
        elif errs:
            res.verdict = "elsewhere"
        else:
            res.verdict = "missed"
        if do_fix:
            res.fix_outcome, res.fix_detail = fix_item(item)
    return res


def fix_item(item: Item) -> tuple[str, str]:
    with tempfile.TemporaryDirectory(prefix="gg-heldout-fix-") as tmp:
        work = _copy(item.dir / "buggy", Path(tmp))
        before = _files_of(work)
        _, problem = lint(work, ["--fix", "--unsafe-fixes"], cwd=work)
        shutil.rmtree(work / ".gradguard_cache", ignore_errors=True)
        if _files_of(work) == before:
            return "no-edit", problem
        try:
            rc, out, err = run_program(work)
        except subprocess.TimeoutExpired:
            return "crashed", "timeout"
        if rc != 0:
            return "crashed", _last_line(err)[:200]
        got = _last_line(out)
        want = item.meta.get("expected_output", "")
        if got == want:
            return "same", ""
        same_params = _param_sum(got) is not None and _param_sum(got) == _param_sum(want)
        return "different", ("(same param_sum) " if same_params else "") + f"{got!r} vs {want!r}"


def _param_sum(line: str) -> str | None:
    m = re.search(r"param_sum (\S+)", line)
    return m.group(1) if m else None


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:5.1f}%" if b else "   - "


def print_tables(results: list[Result], do_fix: bool) -> None:
    cases = [r for r in results if r.item.kind == "case"]
    cleans = [r for r in results if r.item.kind == "clean"]

    def fp(r: Result, name: str) -> int:
        return sum(f.severity == "error" for f in r.findings.get(name, []))

    def table(key: str, title: str) -> None:
        groups: dict[str, list[Result]] = defaultdict(list)
        for r in cases:
            groups[str(r.item.meta.get(key, "?"))].append(r)
        print(f"\n{title}")
        head = f"{'':22} {'n':>3} {'line':>5} {'else':>5} {'miss':>5} {'recall':>7} {'fixed FP':>9}"
        if do_fix:
            head += f" {'same':>5} {'diff':>5} {'crash':>5} {'noedit':>6}"
        print(head)
        rows = sorted(groups.items()) + [("TOTAL", cases)]
        for name, rs in rows:
            c = Counter(r.verdict for r in rs)
            nfp = sum(fp(r, "fixed") > 0 for r in rs)
            line = (f"{name:22} {len(rs):3} {c['line']:5} {c['elsewhere']:5} {c['missed']:5} "
                    f"{_pct(c['line'], len(rs)):>7} {nfp:9}")
            if do_fix:
                fx = Counter(r.fix_outcome for r in rs)
                line += f" {fx['same']:5} {fx['different']:5} {fx['crashed']:5} {fx['no-edit']:6}"
            print(line)

    if cases:
        table("family", "By family (buggy: error-level finding at the failing line / elsewhere / none; fixed: programs with an error-level finding)")
        table("layout", "By layout")
        multi = [r for r in cases if len(list((r.item.dir / "buggy").rglob("*.py"))) > 1]
        single = [r for r in cases if r not in multi]
        print()
        for name, rs in (("single-file", single), ("multi-file", multi)):
            n_line = sum(r.verdict == "line" for r in rs)
            print(f"{name:12}: {n_line}/{len(rs)} at the failing line ({_pct(n_line, len(rs)).strip()})")
        for err in ("freed-graph", "in-place"):
            rs = [r for r in cases if r.item.meta.get("error") == err]
            n_line = sum(r.verdict == "line" for r in rs)
            print(f"{err:12}: {n_line}/{len(rs)} at the failing line ({_pct(n_line, len(rs)).strip()})")
        cond = [r for r in cases if r.item.meta.get("conditional")]
        n_line = sum(r.verdict == "line" for r in cond)
        print(f"{'conditional':12}: {n_line}/{len(cond)} at the failing line ({_pct(n_line, len(cond)).strip()})")
        still = [r.item.id for r in cases if any(f.severity == "error" and _near(f, r.item.meta["failing"]) for f in r.findings.get("fixed", []))]
        fixed_fp = sum(fp(r, "fixed") for r in cases)
        print(f"fixed programs: {sum(fp(r, 'fixed') > 0 for r in cases)}/{len(cases)} with error-level findings "
              f"({fixed_fp} findings; still at the failing line, line*: {', '.join(still) or 'none'})")
    if cleans:
        flagged = [r for r in cleans if fp(r, "clean") > 0]
        print(f"clean programs: {len(flagged)}/{len(cleans)} with error-level findings "
              f"({sum(fp(r, 'clean') for r in cleans)} findings)")
        for r in flagged:
            for f in r.findings["clean"]:
                if f.severity == "error":
                    print(f"  FP {r.item.id}: {f.file}:{f.row} {f.code} {f.message[:100]}")
    missed = [r for r in cases if r.verdict != "line"]
    if missed:
        print("\nNot found at the failing line:")
        for r in missed:
            where = ""
            if r.verdict == "elsewhere":
                where = " (" + ", ".join(f"{f.file}:{f.row} {f.code}" for f in r.findings["buggy"] if f.severity == "error") + ")"
            print(f"  {r.item.id:44} {r.verdict:9} {r.item.meta['family']}/{r.item.meta['layout']}{where}")
    if do_fix:
        n_diff = sum(r.fix_outcome == "different" for r in cases)
        n_same_params = sum(r.fix_detail.startswith("(same param_sum)") for r in cases)
        found_no_edit = sum(r.fix_outcome == "no-edit" and r.verdict == "line" for r in cases)
        print(f"\nfix outcomes: {n_diff} different, of which {n_same_params} end with the hand fix's parameters "
              f"(only a logged figure differs); no-edit on {found_no_edit} cases found at the failing line")
        bad = [r for r in cases if r.fix_outcome in ("different", "crashed")]
        if bad:
            print("\nFixes that did not reproduce the hand fix:")
            for r in bad:
                print(f"  {r.item.id:44} {r.fix_outcome:9} {r.fix_detail}")
    errors = [(r.item.id, e) for r in results for e in r.errors]
    for item_id, e in errors:
        print(f"lint problem in {item_id}: {e}")


def to_json(results: list[Result]) -> list[dict[str, Any]]:
    out = []
    for r in results:
        out.append({
            "id": r.item.id,
            "kind": r.item.kind,
            "meta": r.item.meta,
            "verdict": r.verdict,
            "fix_outcome": r.fix_outcome,
            "fix_detail": r.fix_detail,
            "findings": {k: [vars(f) for f in v] for k, v in r.findings.items()},
            "errors": r.errors,
        })
    return out


# ---------------------------------------------------------------------------------------------- verify


def _record(toml_path: Path, output: str) -> None:
    lines = [l for l in toml_path.read_text().splitlines() if not l.startswith("expected_output = ")]
    lines.append(f"expected_output = {json.dumps(output)}")
    toml_path.write_text("\n".join(lines) + "\n")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def verify_item(item: Item, record: bool) -> tuple[list[str], list[str]]:
    """The problems that break the case, and notes (a program using more than 4 s of CPU)."""
    problems, notes = [], []
    with tempfile.TemporaryDirectory(prefix="gg-heldout-run-") as tmp:
        for name, folder in item.programs.items():
            work = _copy(folder, Path(tmp) / name)
            cpu0 = _children_cpu()
            try:
                rc, out, err = run_program(work)
            except subprocess.TimeoutExpired:
                problems.append(f"{name}: timeout")
                continue
            cpu = _children_cpu() - cpu0
            if cpu > 4:
                notes.append(f"{name}: {cpu:.1f} s of CPU")
            if name == "buggy":
                want = MESSAGES[item.meta["error"]]
                last = _last_line(err)
                if rc == 0:
                    problems.append("buggy: ran to completion")
                elif not last.startswith("RuntimeError") or want not in last:
                    problems.append(f"buggy: wrong error: {last[:160]}")
                frame = raising_frame(err, work)
                if frame != item.meta["failing"]:
                    problems.append(f"buggy: raised at {frame}, case says {item.meta['failing']}")
            else:
                if rc != 0:
                    problems.append(f"{name}: failed: {_last_line(err)[:160]}")
                    continue
                got = _last_line(out)
                if record:
                    _record(item.dir / "case.toml", got)
                elif got != item.meta.get("expected_output"):
                    problems.append(f"{name}: printed {got!r}, expected {item.meta.get('expected_output')!r}")
    return problems, notes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="+", metavar="ID", help="only these cases / clean programs")
    ap.add_argument("--json", metavar="FILE", help="write every verdict and finding to FILE")
    ap.add_argument("--fix", action="store_true", help="also apply gradguard's fixes and run the fixed programs")
    ap.add_argument("--verify", action="store_true", help="run the corpus programs (no gradguard)")
    ap.add_argument("--record", action="store_true", help="with --verify: write each fixed/clean program's line")
    ap.add_argument("--corpus", type=Path, default=CORPUS, help="the corpus folder (default: %(default)s)")
    args = ap.parse_args(argv)
    items = load_items(args.only, args.corpus)
    if not items:
        print("no cases selected", file=sys.stderr)
        return 1
    t0 = time.monotonic()
    if args.verify:
        broken = 0
        for item in items:
            problems, notes = verify_item(item, args.record)
            status = "ok" if not problems else "BROKEN"
            broken += bool(problems)
            print(f"{item.kind:5} {item.id:48} {status}", flush=True)
            for p in problems + notes:
                print(f"      {p}")
        print(f"\n{len(items) - broken}/{len(items)} verified in {time.monotonic() - t0:.0f} s")
        return 1 if broken else 0
    results = []
    for item in items:
        r = bench_item(item, args.fix)
        results.append(r)
        extra = f" fix={r.fix_outcome}" if args.fix and r.item.kind == "case" else ""
        print(f"{item.kind:5} {item.id:48} {r.verdict or '-':9}{extra}", flush=True)
    print_tables(results, args.fix)
    print(f"\n{len(items)} programs in {time.monotonic() - t0:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(to_json(results), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
