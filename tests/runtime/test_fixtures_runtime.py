"""Every fixture of the project under `gradguard run --report` (the runner's own code path).

All fixtures run in ONE interpreter (`fixture_support.run_source_many`): each job calls
`gradguard.runtime.runner.run_program(path, [], module=False, report=...)`, exactly what
`gradguard run --report` does, then the report is read back. Notebooks run as their joined code
cells, written to a script; rows are mapped back to (cell, line in cell).

Buggy fixtures: the report's failing line, freed-by line, carrier and fix kind must match the
fixture's header and markers. Clean and fixed fixtures: exit code 0, a `null` report, and no output
from gradguard. A handful also run through a real `python -m gradguard.runtime.runner`-free
subprocess in test_runner.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fixture_support as fs

pytestmark = [pytest.mark.torch, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]

# The carrier of these fixtures is a local of a function that has returned before the failing call;
# only deep mode (creation sites of module outputs) can name it. Default mode names the nearest live
# tensor instead; both runs are checked.
DEEP_ONLY_CARRIER = {"gg002_auxiliary_loss_backbone.py": "aux_logits"}

# In these fixtures the framework (Lightning) makes the failing backward call after the user's step has
# returned: the failing call is reported at the user's line that entered the framework (`trainer.fit`),
# and the `# [GG008]` marker sits on the user's own backward, which is the freed-by call.
FRAMEWORK_CALLS = "trainer.fit("

JOB = """
import runpy, sys
from gradguard.runtime.runner import run_program
code = run_program({path!r}, [], module=False, report={report!r}, deep={deep!r})
if code:
    raise SystemExit(code)
"""


def _script_for(path: Path, folder: Path) -> tuple[Path, fs.NotebookScript | None]:
    if path.suffix != ".ipynb":
        return path, None
    script = fs.notebook_script(path)
    target = folder / f"{path.parent.name}_{path.stem}_ipynb.py"
    target.write_text(script.source, encoding="utf-8")
    return target, script


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, bool], tuple[Any, Any, fs.NotebookScript | None]]:
    folder = tmp_path_factory.mktemp("runtime-fixtures")
    jobs: dict[str, str] = {}
    meta: dict[str, tuple[tuple[str, bool], Path, fs.NotebookScript | None]] = {}
    everything = fs.buggy_fixtures() + fs.clean_fixtures() + fs.fixed_fixtures()
    plan = [(p, False) for p in everything] + [(p, True) for p in fs.buggy_fixtures() if p.name in DEEP_ONLY_CARRIER]
    for number, (path, deep) in enumerate(plan):
        script, notebook = _script_for(path, folder)
        report = folder / f"report-{number}.json"
        name = f"job{number}_{path.parent.name}_{path.stem}.py"
        jobs[name] = JOB.format(path=str(script), report=str(report), deep=deep)
        meta[name] = ((f"{path.parent.name}/{path.name}", deep), report, notebook)
    outcomes = fs.run_source_many(jobs, prelude=f"import sys\nsys.path.insert(0, {str(REPO)!r})\n")
    results = {}
    for name, outcome in outcomes.items():
        key, report, notebook = meta[name]
        data = json.loads(report.read_text(encoding="utf-8")) if report.exists() else "missing"
        results[key] = (outcome, data, notebook)
    return results


def _row(line: int | None, notebook: fs.NotebookScript | None) -> fs.Row | None:
    if line is None or notebook is None:
        return line
    return notebook.cell_row(line)


def _buggy_ids() -> list[str]:
    return [p.name for p in fs.buggy_fixtures()]


# Reports that miss a part the fixture's header and markers name: strict xfails saying what the monitor lacks.
REPORT_OPEN: dict[str, str] = {
    "gg011_residual_relu_add_in_place.py": (
        "the tensor ReluBackward0 saved was a local of the block's forward, whose frame is gone when the "
        "backward fails: the monitor reports the node and the versions, but neither the in-place write "
        "(`out += x`) nor a name holding the tensor"),
}


@pytest.mark.parametrize("name", [pytest.param(n, marks=[pytest.mark.xfail(strict=True, reason=REPORT_OPEN[n])]
                                               if n in REPORT_OPEN else []) for n in _buggy_ids()])
def test_buggy_fixture_report(runs: dict[Any, Any], name: str) -> None:
    path = fs.FIXTURES / "buggy" / name
    expected = fs.expectation(path)
    outcome, report, notebook = runs[(f"buggy/{name}", False)]
    if expected.error == "none":
        assert outcome.ok, outcome.traceback
        assert report is None
        assert "gradguard" not in outcome.stderr + outcome.stdout
        return
    assert outcome.error_type == "SystemExit", outcome.stderr[-2000:]
    assert report != "missing" and report is not None, outcome.stderr[-3000:]
    assert report["error"] == expected.error
    assert set(report) == {"error", "message", "failing_call", "freed_by", "node", "carrier", "fix", "rule", "explanation"}
    failing_row = _row(report["failing_call"]["line"], notebook)
    source = fs.fixture_source(path).splitlines()
    if expected.codes == {"GG008"}:
        assert FRAMEWORK_CALLS in source[report["failing_call"]["line"] - 1]
    else:
        assert failing_row in expected.marker_rows
    if expected.freed_by:
        assert report["freed_by"] is not None
        assert _row(report["freed_by"]["line"], notebook) in expected.freed_by
        assert report["freed_by"]["call_index"] < report["failing_call"]["call_index"]
    carrier = DEEP_ONLY_CARRIER.get(name, expected.carrier)
    assert report["carrier"] is not None and report["carrier"]["expression"] == carrier
    assert report["fix"]["kind"] == expected.fix
    assert report["rule"] in expected.codes
    assert report["fix"]["suggestion"]
    assert "gradguard: " in outcome.stderr


@pytest.mark.parametrize("name", sorted(DEEP_ONLY_CARRIER))
def test_deep_mode_names_carriers_of_returned_functions(runs: dict[Any, Any], name: str) -> None:
    expected = fs.expectation(fs.FIXTURES / "buggy" / name)
    _, report, _ = runs[(f"buggy/{name}", True)]
    assert report["carrier"]["expression"] == expected.carrier
    assert report["fix"]["kind"] == expected.fix


def _clean_ids() -> list[str]:
    return [f"clean/{p.name}" for p in fs.clean_fixtures()] + [f"fixed/{p.name}" for p in fs.fixed_fixtures()]


@pytest.mark.parametrize("key", _clean_ids())
def test_clean_and_fixed_fixtures_run_silently(runs: dict[Any, Any], key: str) -> None:
    outcome, report, _ = runs[(key, False)]
    assert outcome.ok, outcome.traceback or outcome.stderr[-2000:]
    assert report is None
    assert "gradguard" not in outcome.stderr + outcome.stdout


@pytest.mark.parametrize("name", _buggy_ids())
def test_lint_and_runtime_name_the_same_rule_and_fix_kind(runs: dict[Any, Any], name: str) -> None:
    """One model of causes: the lint rule's decision for a buggy fixture (rule and fix kind, from the
    dataflow facts) is the monitor's decision on the same program (from the runtime evidence)."""
    from gradguard.rules import decisions_for

    path = fs.FIXTURES / "buggy" / name
    expected = fs.expectation(path)
    lint = {(d.code, str(d.kind)) for d in decisions_for(fs.fixture_source(path))}
    _, report, _ = runs[(f"buggy/{name}", False)]
    if expected.error == "none":
        assert report is None
        assert any(code in expected.codes and kind == expected.fix for code, kind in lint), lint
        return
    assert (report["rule"], report["fix"]["kind"]) in lint, (report["rule"], report["fix"]["kind"], lint)


# Where lint and the monitor name different values for one stale graph: strict xfails, each to go when
# both name what the user would (`(mu, logvar)`, the `scores` that split views hang on).
CARRIER_OPEN: dict[str, str] = {
    "gg011_residual_relu_add_in_place.py": (
        "lint names `out`, the ReLU's output the block's forward adds its input to in place; the monitor "
        "sees the node that saved it (ReluBackward0) and the versions, but the forward's frame is gone "
        "when the backward fails, so no name holds the tensor any more and it names none"),
    "gg002_auxiliary_loss_backbone.py": (
        "lint names `mid`, the stem's features inside forward that both losses share (what the fixture's header "
        "expects, now that `if self.training:` runs one way); the monitor names `aux_logits`, the value of the "
        "user's frame the second backward reaches first, which the first loss never read"),
}


@pytest.mark.parametrize("name", [pytest.param(n, marks=[pytest.mark.xfail(strict=True, reason=CARRIER_OPEN[n])]
                                               if n in CARRIER_OPEN else []) for n in _buggy_ids()])
def test_lint_and_runtime_name_the_same_carrier(runs: dict[Any, Any], name: str) -> None:
    """The carrier a lint finding names is the one the monitor's report names for the same run."""
    from gradguard.rules import decisions_for

    path = fs.FIXTURES / "buggy" / name
    _, report, _ = runs[(f"buggy/{name}", False)]
    if report is None:
        return  # no error at run time (a graph kept for logging): nothing to compare
    carriers = {d.carrier for d in decisions_for(fs.fixture_source(path)) if d.code == report["rule"]}
    assert report["carrier"]["expression"] in carriers, (report["carrier"]["expression"], carriers)


GRADIENT_PROBE = """\
import torch

torch.manual_seed(0)
model = torch.nn.Linear(3, 2)
x = torch.randn(4, 3)
for step in range(2):
    loss = model(x).pow(2).mean()
    loss.backward()
    first = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    loss.backward()
    model.zero_grad()
"""

DISTRIBUTION_CARRIED = """\
import torch
from torch.distributions import Normal

torch.manual_seed(0)
mu = torch.zeros(3, requires_grad=True)
opt = torch.optim.SGD([mu], lr=0.1)
q = Normal(mu * 1.0, 1.0)
for step in range(3):
    q = Normal(q.loc * 0.9 + 0.1, 1.0)
    loss = -q.log_prob(torch.ones(3)).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_both_halves_follow_intent_and_types_the_same_way(tmp_path: Path) -> None:
    """Gradients copied between two backwards of one loss: retain_graph, not removal; a distribution
    carried across iterations: rebuilt, never detached; a nested per-layer state: detached, not
    emptied. Lint and the monitor decide alike."""
    from gradguard.rules import decisions_for

    clean = fs.fixture_source(fs.FIXTURES / "clean" / "c3_nested_state_repackaged.py")
    nested = "".join(line for line in clean.splitlines(keepends=True) if "= repackage_hidden(" not in line)
    programs = {"probe": (GRADIENT_PROBE, ("GG001", "retain_graph")),
                "distribution": (DISTRIBUTION_CARRIED, ("GG003", "recompute_in_loop")),
                "nested": (nested, ("GG003", "detach"))}
    jobs = {}
    for name, (source, _) in programs.items():
        script = tmp_path / f"{name}.py"
        script.write_text(source, encoding="utf-8")
        jobs[f"job_{name}.py"] = JOB.format(path=str(script), report=str(tmp_path / f"{name}.json"), deep=False)
    fs.run_source_many(jobs, prelude=f"import sys\nsys.path.insert(0, {str(REPO)!r})\n")
    for name, (source, wanted) in programs.items():
        report = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
        assert (report["rule"], report["fix"]["kind"]) == wanted, (name, report)
        assert [(d.code, str(d.kind)) for d in decisions_for(source)] == [wanted], name
        assert ".detach()" not in report["fix"]["suggestion"] or name != "distribution"
    # A per-layer list of (h, c) tuples: never `del state[:]` nor `.detach()` on a tuple; each layer's
    # tuple is detached, in the text lint's fix writes for that shape.
    from gradguard.causes import detach_code

    suggestion = json.loads((tmp_path / "nested.json").read_text(encoding="utf-8"))["fix"]["suggestion"]
    assert suggestion == f"state = {detach_code('state', 'list', items='tuple')}"
