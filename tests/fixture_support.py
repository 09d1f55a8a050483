"""Shared support for the fixtures under `fixtures/`: discovery, expectations, and a one-process runner.

Fixture conventions (header line, `# [GGnnn]` and `# <freed-by>` markers) are described in the fixture
docs; this module reads them. Running fixtures is the expensive part (`import torch` alone costs
seconds), so `run_many` executes any number of fixtures in ONE fresh interpreter, each one as
`__main__` in a fresh namespace with the random generators reseeded and torch's global modes reset.

A prelude (Python source) may be run once in that interpreter before the fixtures, e.g. to install
gradguard's runtime monitor. The prelude may define two hooks in its own namespace:

- `before_fixture(name: str) -> None`, called before each fixture;
- `after_fixture(name: str, exc: BaseException | None) -> object`, called after each fixture with the
  exception it raised (or None); its JSON-serializable return value becomes `RunOutcome.attached`.

`name` is the fixture's absolute path (or the key given to `run_source_many`).
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tempfile
import tokenize
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

ERROR_KINDS = frozenset({"double-backward", "inplace-modified", "none"})
FIX_KINDS = frozenset({"detach", "retain_graph", "sum_losses", "item", "recompute_in_loop", "no_grad", "create_graph",
                       "move_step", "other"})
DOUBLE_BACKWARD_MESSAGE = "Trying to backward through the graph a second time"
INPLACE_MESSAGE = "modified by an inplace operation"

HEADER_PREFIX = "# gradguard-expect:"
_MARKER = re.compile(r"\[(GG\d{3})\]")
_FREED_BY = "<freed-by>"
_SUFFIXES = (".py", ".ipynb")

Row = int | tuple[int, int]
"""A line of a fixture: the 1-based line for scripts, (cell index, line in cell) for notebooks.

The cell index is 1-based into the notebook's `cells` list (markdown cells count), as gradguard
reports notebook findings.
"""


class FixtureFormatError(ValueError):
    """A fixture does not follow the conventions (header, markers, notebook structure)."""


class HarnessError(RuntimeError):
    """The runner process failed as a whole (crash, timeout, broken prelude), not one fixture."""


def _listing(folder: str) -> list[Path]:
    root = FIXTURES / folder
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_file() and p.suffix in _SUFFIXES)


def buggy_fixtures() -> list[Path]:
    """All buggy fixtures (`fixtures/buggy/*.py` and `*.ipynb`), sorted."""
    return _listing("buggy")


def clean_fixtures() -> list[Path]:
    """All clean fixtures (`fixtures/clean/*.py` and `*.ipynb`), sorted."""
    return _listing("clean")


def fixed_fixtures() -> list[Path]:
    """All hand-written fixed fixtures (`fixtures/fixed/*.py` and `*.ipynb`), sorted."""
    return _listing("fixed")


def fixed_for(path: Path) -> Path:
    """The path of the hand-written fixed twin of the buggy fixture `path` (it may not exist)."""
    return FIXTURES / "fixed" / Path(path).name


def rule_of(path: Path) -> str | None:
    """The rule code a buggy fixture is named after (`gg003_lstm.py` -> `GG003`), or None."""
    match = re.match(r"gg(\d{3})_", Path(path).name)
    return f"GG{match.group(1)}" if match else None


# --------------------------------------------------------------------------------------------------
# Notebooks


def _cell_lines(cell: Mapping[str, Any]) -> list[str]:
    source = cell.get("source", "")
    text = "".join(source) if isinstance(source, list) else str(source)
    return text.splitlines()


_PYTHON_BODY_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})


def _is_magic_or_shell(line: str) -> bool:
    stripped = line.lstrip()
    return stripped.startswith(("%", "!"))


def _cell_magic(first_line: str) -> str | None:
    stripped = first_line.lstrip()
    if not stripped.startswith("%%"):
        return None
    return stripped[2:].split(maxsplit=1)[0] if stripped[2:].strip() else ""


@dataclass(frozen=True)
class NotebookScript:
    """The code cells of a notebook joined into one program, and where each of its lines came from."""

    source: str
    origins: tuple[tuple[int, int], ...]
    """`origins[i]` is the (cell index, line in cell) of script line i + 1, both 1-based."""

    def cell_row(self, row: int) -> tuple[int, int]:
        """Map a 1-based line of `source` back to (cell index, line within that cell)."""
        return self.origins[row - 1]


def notebook_script_from_text(text: str) -> NotebookScript:
    """Join the code cells of a notebook given as JSON text; magic and shell lines become blank.

    A cell starting with a cell magic is blanked entirely (`%%bash`, `%%html`: its body is not
    Python), except for the magics whose body IPython runs as Python (`%%time`, `%%timeit`,
    `%%capture`, `%%prun`), where only the magic line is blanked.
    """
    try:
        notebook = json.loads(text)
        cells = notebook["cells"]
    except (ValueError, KeyError, TypeError) as exc:
        raise FixtureFormatError(f"not a notebook: {exc}") from exc
    lines: list[str] = []
    origins: list[tuple[int, int]] = []
    for index, cell in enumerate(cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        cell_lines = _cell_lines(cell)
        magic = _cell_magic(cell_lines[0]) if cell_lines else None
        blank_all = magic is not None and magic not in _PYTHON_BODY_CELL_MAGICS
        for row, line in enumerate(cell_lines, start=1):
            lines.append("" if blank_all or _is_magic_or_shell(line) else line)
            origins.append((index, row))
    return NotebookScript("\n".join(lines) + "\n", tuple(origins))


def notebook_script(path: Path) -> NotebookScript:
    """`notebook_script_from_text` for a notebook file."""
    return notebook_script_from_text(Path(path).read_text(encoding="utf-8"))


def notebook_to_script(path: Path) -> str:
    """The code cells of the notebook at `path` joined into one program (magic/shell lines blanked)."""
    return notebook_script(path).source


def fixture_source(path: Path) -> str:
    """The Python program a fixture stands for: the file itself, or a notebook's joined code cells."""
    path = Path(path)
    if path.suffix == ".ipynb":
        return notebook_to_script(path)
    return path.read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------------------
# Expectations


@dataclass(frozen=True)
class Expectation:
    """What a fixture declares about itself: its header and its line markers."""

    error: str
    """`double-backward`, `inplace-modified` or `none`."""
    carrier: str | None
    """The expression that brought the stale graph into the failing call; None for `-` or absent.
    A header holds no spaces: `carrier=(mu,logvar)` reads as `(mu, logvar)`."""
    fix: str | None
    """The fix kind (`detach`, `sum_losses`, ...); None when the header has none (clean/fixed)."""
    markers: tuple[tuple[Row, str], ...] = ()
    """`(row, code)` for each `# [GGnnn]` marker, in file order."""
    freed_by: tuple[Row, ...] = ()
    """Rows carrying `# <freed-by>`: the earlier backward/grad call that freed the graph."""
    header: dict[str, str] = field(default_factory=dict)
    """All `key=value` pairs of the header line, verbatim."""

    @property
    def marker_rows(self) -> frozenset[Row]:
        """The rows with at least one `# [GGnnn]` marker."""
        return frozenset(row for row, _ in self.markers)

    @property
    def codes(self) -> frozenset[str]:
        """The rule codes named by the markers."""
        return frozenset(code for _, code in self.markers)


def _parse_header(first_line: str) -> dict[str, str]:
    if not first_line.startswith(HEADER_PREFIX):
        raise FixtureFormatError(f"first line is not a `{HEADER_PREFIX}` header: {first_line!r}")
    pairs: dict[str, str] = {}
    for token in first_line[len(HEADER_PREFIX) :].split():
        key, sep, value = token.partition("=")
        if not sep or not key or not value:
            raise FixtureFormatError(f"malformed header item {token!r}")
        if key in pairs:
            raise FixtureFormatError(f"header key {key!r} given twice")
        pairs[key] = value
    if "error" not in pairs:
        raise FixtureFormatError("header has no error=...")
    return pairs


def _comments(source: str) -> list[tuple[int, str]]:
    readline = io.StringIO(source).readline
    try:
        return [
            (tok.start[0], tok.string) for tok in tokenize.generate_tokens(readline) if tok.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError) as exc:
        raise FixtureFormatError(f"cannot tokenize: {exc}") from exc


def expectation_from_source(source: str, *, notebook: NotebookScript | None = None) -> Expectation:
    """Parse the header and markers of a fixture's Python source.

    With `notebook`, `source` is `notebook.source` and rows are reported as (cell, line in cell).
    """
    first_line = source.split("\n", 1)[0].rstrip("\r")
    header = _parse_header(first_line)
    carrier = header.get("carrier")
    markers: list[tuple[Row, str]] = []
    freed_by: list[Row] = []
    for row, comment in _comments(source):
        where: Row = notebook.cell_row(row) if notebook is not None else row
        markers.extend((where, code) for code in _MARKER.findall(comment))
        if _FREED_BY in comment:
            freed_by.append(where)
    return Expectation(
        error=header["error"],
        carrier=None if carrier in (None, "-") else carrier.replace(",", ", "),
        fix=header.get("fix"),
        markers=tuple(markers),
        freed_by=tuple(freed_by),
        header=header,
    )


def expectation(path: Path) -> Expectation:
    """The expectation declared by the fixture at `path` (.py, or .ipynb with rows as (cell, line))."""
    path = Path(path)
    if path.suffix == ".ipynb":
        script = notebook_script(path)
        return expectation_from_source(script.source, notebook=script)
    return expectation_from_source(path.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------------------------------
# Running


@dataclass(frozen=True)
class RunOutcome:
    """What happened when one fixture ran."""

    stdout: str
    stderr: str
    error_type: str | None
    """The exception's class name (`RuntimeError`), or None when the fixture finished."""
    error_message: str | None
    row: Row | None
    """Where the exception was raised in the fixture: the innermost traceback frame in its file."""
    frames: tuple[Row, ...]
    """Every traceback frame in the fixture's file, outermost first (the call chain to `row`)."""
    notes: tuple[str, ...]
    """The exception's `__notes__` (PEP 678)."""
    attached: Any
    """What the prelude's `after_fixture` hook returned (JSON round-tripped), else None."""
    traceback: str
    seconds: float

    @property
    def ok(self) -> bool:
        """True when the fixture ran to completion."""
        return self.error_type is None

    @property
    def is_double_backward(self) -> bool:
        """True when the fixture raised torch's "backward through the graph a second time" error."""
        return self.error_type == "RuntimeError" and DOUBLE_BACKWARD_MESSAGE in (self.error_message or "")

    def raised(self, message: str) -> bool:
        """True when the fixture raised a RuntimeError whose message holds `message`."""
        return self.error_type == "RuntimeError" and message in (self.error_message or "")


@dataclass(frozen=True)
class _Job:
    name: str
    filename: str
    source: str | None


def _tail(text: str, limit: int = 4000) -> str:
    return text if len(text) <= limit else "..." + text[-limit:]


def _execute(jobs: list[_Job], prelude: str, timeout: float) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="gg-fixtures-") as tmp:
        spec_path = Path(tmp) / "spec.json"
        results_path = Path(tmp) / "results.jsonl"
        spec = {
            "prelude": prelude,
            "results": str(results_path),
            "jobs": [job.__dict__ for job in jobs],
        }
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        bootstrap = (
            "import sys; sys.path.insert(0, sys.argv[1]); "
            "import fixture_support; fixture_support._child_main(sys.argv[2])"
        )
        command = [sys.executable, "-c", bootstrap, str(Path(__file__).parent), str(spec_path)]
        env = dict(os.environ, PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
        try:
            proc = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=timeout,
                env=env,
                stdin=subprocess.DEVNULL,
                cwd=FIXTURES.parent,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            done = _read_results(results_path)
            raise HarnessError(
                f"fixture runner timed out after {timeout:.0f}s while running "
                f"{_current_job(done)}; stderr:\n{_tail(_text(exc.stderr))}"
            ) from None
        done = _read_results(results_path)
        finished = [entry for entry in done if entry["event"] == "done"]
        if proc.returncode != 0 or len(finished) != len(jobs):
            raise HarnessError(
                f"fixture runner exited with {proc.returncode} after {len(finished)} of {len(jobs)} "
                f"fixtures (while running {_current_job(done)}); stderr:\n{_tail(proc.stderr)}"
            )
        return finished


def _text(data: str | bytes | None) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data


def _read_results(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            entries.append(json.loads(line))
    return entries


def _current_job(entries: list[dict[str, Any]]) -> str:
    started = [e["name"] for e in entries if e["event"] == "start"]
    finished = {e["name"] for e in entries if e["event"] == "done"}
    pending = [name for name in started if name not in finished]
    return pending[-1] if pending else "the prelude or start-up"


def _outcome(raw: dict[str, Any], script: NotebookScript | None) -> RunOutcome:
    def where(row: int) -> Row:
        return script.cell_row(row) if script is not None else row

    frames = tuple(where(row) for row in raw["frames"])
    return RunOutcome(
        stdout=raw["stdout"],
        stderr=raw["stderr"],
        error_type=raw["error_type"],
        error_message=raw["error_message"],
        row=frames[-1] if frames else None,
        frames=frames,
        notes=tuple(raw["notes"]),
        attached=raw["attached"],
        traceback=raw["traceback"],
        seconds=raw["seconds"],
    )


def run_many(paths: Iterable[Path], *, prelude: str = "", timeout: float = 300) -> dict[Path, RunOutcome]:
    """Run fixtures (.py or .ipynb) in one fresh interpreter; return each one's outcome by its path.

    Each fixture runs as `__main__` in a fresh namespace (scripts through `runpy.run_path`, notebooks
    as their joined code cells), after `torch.manual_seed(0)`, `random.seed(0)`, numpy's seed (when
    installed), with one torch thread, grad mode on, anomaly mode off and float32 as default dtype.
    `timeout` (seconds) bounds the whole run; raises HarnessError if the runner itself crashes or
    times out, naming the fixture that was running.
    """
    paths = [Path(p) for p in paths]
    jobs: list[_Job] = []
    scripts: list[NotebookScript | None] = []
    for path in paths:
        absolute = path.resolve()
        if absolute.suffix == ".ipynb":
            script = notebook_script(absolute)
            jobs.append(_Job(str(absolute), str(absolute), script.source))
            scripts.append(script)
        else:
            jobs.append(_Job(str(absolute), str(absolute), None))
            scripts.append(None)
    raw = _execute(jobs, prelude, timeout)
    return {path: _outcome(entry, script) for path, entry, script in zip(paths, raw, scripts, strict=True)}


def run_source_many(sources: Mapping[str, str], *, prelude: str = "", timeout: float = 300) -> dict[str, RunOutcome]:
    """Like `run_many` for programs held in memory: `{name: text}` -> `{name: outcome}`.

    `name` serves as the program's filename in tracebacks. A name ending in `.ipynb` means `text` is
    notebook JSON, run as its joined code cells, with rows reported as (cell, line in cell).
    """
    jobs: list[_Job] = []
    scripts: list[NotebookScript | None] = []
    for name, text in sources.items():
        if name.endswith(".ipynb"):
            script = notebook_script_from_text(text)
            jobs.append(_Job(name, name, script.source))
            scripts.append(script)
        else:
            jobs.append(_Job(name, name, text))
            scripts.append(None)
    raw = _execute(jobs, prelude, timeout)
    return {name: _outcome(entry, script) for name, entry, script in zip(sources, raw, scripts, strict=True)}


_PROGRAMS_PRELUDE = """
import json, os, sys
_ARGUMENTS = json.loads({arguments!r})


def before_fixture(name):
    sys.path.insert(0, os.path.dirname(name))  # the modules beside the script
    sys.argv.extend(_ARGUMENTS.get(name, []))


def after_fixture(name, exc):
    folder = os.path.dirname(name)
    sys.path.remove(folder)
    for key, module in list(sys.modules.items()):
        if (getattr(module, "__file__", None) or "").startswith(folder + os.sep):
            del sys.modules[key]  # the next program's `layers` is its own
"""


def run_programs(scripts: Mapping[Path, list[str]], *, timeout: float = 600) -> dict[Path, RunOutcome]:
    """Run scripts with their command-line arguments in one fresh interpreter (`run_many`), each able to
    import the modules beside it (a program of several files, each in a folder of its own)."""
    arguments = json.dumps({str(Path(path).resolve()): args for path, args in scripts.items()})
    return run_many(list(scripts), prelude=_PROGRAMS_PRELUDE.format(arguments=arguments), timeout=timeout)


# --------------------------------------------------------------------------------------------------
# The child process (runs inside the fresh interpreter started by `_execute`)


def _child_main(spec_path: str) -> None:
    import contextlib
    import gc
    import linecache
    import random
    import runpy
    import time
    import traceback
    import types
    import warnings

    import torch

    try:
        import numpy
    except ImportError:
        numpy = None

    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    results = open(spec["results"], "a", encoding="utf-8")  # noqa: SIM115 - kept open for the run

    def emit(entry: dict[str, Any]) -> None:
        results.write(json.dumps(entry) + "\n")
        results.flush()

    # Pay the one-off optimizer/dynamo import here, so no fixture's timing includes it.
    warm = torch.zeros(1, requires_grad=True)
    torch.optim.SGD([warm], lr=0.1).step()
    torch.optim.Adam([warm], lr=0.1).step()

    hooks: dict[str, Any] = {"__name__": "__gradguard_prelude__"}
    if spec["prelude"]:
        exec(compile(spec["prelude"], "<prelude>", "exec"), hooks)  # noqa: S102 - running it is the point
    before = hooks.get("before_fixture")
    after = hooks.get("after_fixture")
    real_argv = sys.argv
    real_main = sys.modules["__main__"]

    for job in spec["jobs"]:
        name, filename, source = job["name"], job["filename"], job["source"]
        emit({"event": "start", "name": name})
        torch.manual_seed(0)
        random.seed(0)
        if numpy is not None:
            numpy.random.seed(0)
        torch.set_num_threads(1)
        torch.set_grad_enabled(True)
        torch.autograd.set_detect_anomaly(False)
        torch.set_default_dtype(torch.float32)
        out, err = io.StringIO(), io.StringIO()
        error: BaseException | None = None
        attached: Any = None
        sys.argv = [filename]
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
                if before is not None:
                    before(name)
                started = time.perf_counter()
                try:
                    if source is None:
                        runpy.run_path(filename, run_name="__main__")
                    else:
                        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
                        module = types.ModuleType("__main__")
                        module.__file__ = filename
                        sys.modules["__main__"] = module
                        try:
                            exec(compile(source, filename, "exec"), module.__dict__)  # noqa: S102 - as runpy would
                        finally:
                            sys.modules["__main__"] = real_main
                except SystemExit as exc:
                    if exc.code not in (None, 0):
                        error = exc
                except Exception as exc:  # noqa: BLE001 - every fixture failure is data
                    error = exc
                seconds = time.perf_counter() - started
                if after is not None:
                    attached = json.loads(json.dumps(after(name, error)))
        finally:
            sys.argv = real_argv
        frames: list[int] = []
        formatted = ""
        if error is not None:
            frames = [
                lineno
                for frame, lineno in traceback.walk_tb(error.__traceback__)
                if frame.f_code.co_filename == filename
            ]
            formatted = "".join(traceback.format_exception(error))
        emit(
            {
                "event": "done",
                "name": name,
                "stdout": out.getvalue(),
                "stderr": err.getvalue(),
                "error_type": type(error).__name__ if error is not None else None,
                "error_message": str(error) if error is not None else None,
                "frames": frames,
                "notes": [str(note) for note in getattr(error, "__notes__", ())],
                "attached": attached,
                "traceback": formatted,
                "seconds": seconds,
            }
        )
        del error
        gc.collect()
    results.close()


def error_lines(script: Path) -> list[tuple[str, str]]:
    """The error-level findings of a script of a program (the modules beside it read too), each as
    its rule code and the text of the line it is reported at."""
    from gradguard.analysis import analyze

    source = script.read_text(encoding="utf-8")
    lines = source.splitlines()
    return [(d.code, lines[d.span.start.row - 1].strip()) for d in analyze(source, path=str(script))
            if d.severity.name == "ERROR"]


def values_after(source: str, statement_prefix: str, expression: str, *, path: str | None = None,
                 function: str | None = None) -> list[Any]:
    """The model itself: the abstract value of `expression` after each run of the statement (of the
    module's code, or of `function`'s) that starts with `statement_prefix`, on every path the analysis
    took there. `path` lets the analysis read the modules beside the file."""
    import libcst as cst

    from gradguard.analysis.program import Program
    from gradguard.analysis.project import Project

    seen: list[Any] = []

    class Watching(Program):
        def _exec_statement(self, statement: cst.CSTNode, state: Any, frame: Any) -> None:
            super()._exec_statement(statement, state, frame)
            running = frame.function.qualname if frame.function is not None else None
            if running == function and self.code_of(statement).strip().startswith(statement_prefix):
                seen.append(self.eval(cst.parse_expression(expression), state.copy(), frame))

    Watching(cst.parse_module(source), frozenset(), Project(path) if path is not None else None).run()
    return seen
