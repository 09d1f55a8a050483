"""Snapshots: a value computed once that the loss compares against, or that no optimizer of the loop
trains, is computed without a graph where it is made (`FixKind.NO_GRAD`), not recomputed each step.

The evidence (`Carrier.untrained`, `Carrier.reference`) comes from the dataflow model: which modules
made the stale graph and which optimizers stepped, and where the nodes computed from the stale value
alone meet the rest of the loss. The monitor reads the same two facts from the graph; both halves are
run here on the same programs."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from fixture_support import run_source_many

from gradguard.analysis import facts_for
from gradguard.analysis.facts import Cause
from gradguard.causes import Cause as ModelCause
from gradguard.causes import Evidence, FixKind, fix_kind
from gradguard.config import Selection
from gradguard.engine import Prepared
from gradguard.fixes import fix_prepared
from gradguard.rules import decisions_for

ALL = Selection(select=("GG",), ignore=())
REPO = Path(__file__).resolve().parents[2]


def program(setup: str, loss: str, *, header: str = "import torch\nimport torch.nn.functional as F\n") -> str:
    """A loop whose loss reads what `setup` built once before it."""
    return header + textwrap.dedent(setup) + textwrap.dedent(f"""\
        for step in range(3):
            x = torch.randn(4, 3)
            loss = {loss}
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"{{loss.item():.6f}}")
        """)


ONE_MODEL = """\
torch.manual_seed(0)
model = torch.nn.Linear(3, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x0 = torch.randn(4, 3)
anchor = model(x0)
"""

TEACHER = """\
torch.manual_seed(0)
teacher = torch.nn.Linear(3, 3)
student = torch.nn.Linear(3, 3)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
x0 = torch.randn(4, 3)
anchor = teacher(x0)
"""

PROGRAMS = {
    # The fresh output compared against the snapshot of the same module: a difference, a ratio, a target.
    "difference": (program(ONE_MODEL, "(model(x) - anchor).pow(2).mean()"), True, False),
    "ratio": (program(ONE_MODEL, "(model(x) / anchor).mean()"), True, False),
    "target": (program(ONE_MODEL, "F.mse_loss(model(x), anchor)"), True, False),
    "loss module's target": (program(ONE_MODEL + "criterion = torch.nn.MSELoss()\n",
                                     "criterion(model(x), anchor)"), True, False),
    # Read as something else: weights built once, the input of a loss, a factor.
    "input of a loss": (program(ONE_MODEL, "F.mse_loss(anchor, model(x))"), False, False),
    "factor": (program(ONE_MODEL, "(model(x) * anchor).pow(2).mean()"), False, False),
    "product": (program(ONE_MODEL, "(model(x) @ anchor.T).pow(2).mean()"), False, False),
    "target and factor": (program(ONE_MODEL, "F.mse_loss(model(x), anchor) + (model(x) * anchor).mean()"),
                          False, False),
    # A teacher: no optimizer of the loop updates it, whatever the loss does with its output.
    "teacher": (program(TEACHER, "(student(x) * anchor).pow(2).mean()"), False, True),
    "teacher's target": (program(TEACHER, "F.mse_loss(student(x), anchor)"), True, True),
    "teacher trained too": (program(TEACHER.replace("opt = torch.optim.SGD(student.parameters(), lr=0.1)",
                                                    "opt = torch.optim.SGD([*student.parameters(), "
                                                    "*teacher.parameters()], lr=0.1)"),
                                    "(student(x) * anchor).pow(2).mean()"), False, False),
    # A difference with another trained module's fresh output is no snapshot of that module.
    "difference with another module": (program(TEACHER.replace(
        "opt = torch.optim.SGD(student.parameters(), lr=0.1)",
        "opt = torch.optim.SGD([*student.parameters(), *teacher.parameters()], lr=0.1)"),
        "(student(x) - anchor).pow(2).mean()"), False, False),
}


def carrier_facts(source: str) -> tuple[bool | None, bool]:
    facts = facts_for(source)
    assert facts is not None
    (conflict,) = facts.conflicts
    assert conflict.cause is Cause.BUILT_BEFORE_LOOP and conflict.carrier is not None
    return conflict.carrier.reference, conflict.carrier.untrained


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_model_tells_a_snapshot_from_a_value_to_recompute(name: str) -> None:
    source, reference, untrained = PROGRAMS[name]
    assert carrier_facts(source) == (reference, untrained)
    wanted = FixKind.NO_GRAD if reference or untrained else FixKind.RECOMPUTE_IN_LOOP
    assert [(d.code, d.kind) for d in decisions_for(source)] == [("GG006", wanted)]


def test_the_cause_model_computes_a_snapshot_without_a_graph() -> None:
    assert fix_kind(ModelCause.OUTSIDE_LOOP, Evidence()) is FixKind.RECOMPUTE_IN_LOOP
    assert fix_kind(ModelCause.OUTSIDE_LOOP, Evidence(frozen_source=True)) is FixKind.NO_GRAD
    assert fix_kind(ModelCause.OUTSIDE_LOOP, Evidence(reference_only=True)) is FixKind.NO_GRAD
    # Only a value built once: state carried across iterations is still detached where it is carried.
    assert fix_kind(ModelCause.LOOP_CARRIED, Evidence(reference_only=True)) is FixKind.DETACH


def test_a_module_named_otherwise_where_it_ran_may_be_the_trained_one() -> None:
    # `net` in the helper is `student`: a name the loop's code does not know proves no teacher.
    source = program("""\
        def embed(net, x):
            return net(x)


        torch.manual_seed(0)
        student = torch.nn.Linear(3, 3)
        opt = torch.optim.SGD(student.parameters(), lr=0.1)
        x0 = torch.randn(4, 3)
        anchor = embed(student, x0)
        """, "(student(x) * anchor).mean()")
    assert carrier_facts(source) == (False, False)
    assert [d.kind for d in decisions_for(source)] == [FixKind.RECOMPUTE_IN_LOOP]


def test_a_trainer_s_teacher_is_named_by_the_method_that_runs_the_loop() -> None:
    source = textwrap.dedent("""\
        import torch


        class Distiller:
            def __init__(self, teacher, student):
                self.teacher = teacher
                self.student = student
                self.opt = torch.optim.SGD(student.parameters(), lr=0.1)

            def fit(self, x, epochs):
                targets = self.teacher(x)
                for _ in range(epochs):
                    loss = (self.student(x) * targets).mean()
                    self.opt.zero_grad()
                    loss.backward()
                    self.opt.step()


        Distiller(torch.nn.Linear(4, 3), torch.nn.Linear(4, 3)).fit(torch.randn(8, 4), 3)
        """)
    assert carrier_facts(source) == (False, True)
    assert "        with torch.no_grad():\n            targets = self.teacher(x)\n" in fixed(source)


def test_a_parameter_read_directly_is_the_trained_module_s() -> None:
    source = program("""\
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 3)
        proto = torch.nn.Parameter(torch.randn(3, 3))
        opt = torch.optim.SGD([*model.parameters(), proto], lr=0.1)
        table = F.normalize(proto, dim=1)
        """, "(model(x) @ table.T).pow(2).mean()")
    assert carrier_facts(source) == (False, False)


def fixed(source: str) -> str:
    result, remaining, applied, note = fix_prepared(Prepared("train.py", source, "utf-8"), ALL, unsafe=True)
    assert note is None and remaining == () and applied == 1, (note, remaining)
    return result.source


def test_the_statement_that_makes_it_runs_under_no_grad_as_the_module_spells_it() -> None:
    source = PROGRAMS["difference"][0]
    assert "with torch.no_grad():\n    anchor = model(x0)\n" in fixed(source)
    aliased = source.replace("import torch\n", "import torch as th\nimport torch\n", 1)
    assert "with th.no_grad():\n    anchor = model(x0)\n" in fixed(aliased)
    imported = source.replace("import torch\n", "import torch\nfrom torch import no_grad\n", 1)
    assert "with no_grad():\n    anchor = model(x0)\n" in fixed(imported)


def test_a_statement_that_assigns_other_values_too_is_followed_by_a_detach() -> None:
    source = PROGRAMS["difference"][0].replace("anchor = model(x0)", "anchor, other = model(x0), x0 * 2")
    text = fixed(source)
    assert "anchor, other = model(x0), x0 * 2\nanchor = anchor.detach()\n" in text


def test_without_an_import_of_torch_the_fix_is_given_in_words() -> None:
    source = PROGRAMS["difference"][0].replace("import torch\n", "from torch import nn, optim, randn\n", 1)
    source = source.replace("torch.manual_seed(0)\n", "").replace("torch.nn.Linear", "nn.Linear")
    source = source.replace("torch.optim.SGD", "optim.SGD").replace("torch.randn", "randn")
    facts_source = fix_prepared(Prepared("train.py", source, "utf-8"), ALL, unsafe=True)
    result, remaining, applied, _ = facts_source
    assert applied == 0 and result.source == source
    (finding,) = remaining
    assert finding.code == "GG006" and "without a graph where it is made" in finding.message


JOB = """
from gradguard.runtime.runner import run_program
code = run_program({path!r}, [], module=False, report={report!r}, deep=False)
if code:
    raise SystemExit(code)
"""


@pytest.mark.torch
def test_the_monitor_reaches_the_same_fix_kind(tmp_path: Path) -> None:
    """Both halves decide alike: the snapshot (a difference with the same module's fresh output, a
    target, a teacher's output) is computed without a graph; a value read as a factor is recomputed."""
    names = ["difference", "ratio", "target", "factor", "teacher", "teacher trained too"]
    jobs = {}
    for name in names:
        script = tmp_path / f"{name.replace(' ', '_')}.py"
        script.write_text(PROGRAMS[name][0], encoding="utf-8")
        jobs[f"job_{script.stem}.py"] = JOB.format(path=str(script), report=str(script.with_suffix(".json")))
    run_source_many(jobs, prelude=f"import sys\nsys.path.insert(0, {str(REPO)!r})\n")
    for name in names:
        report = json.loads((tmp_path / f"{name.replace(' ', '_')}.json").read_text(encoding="utf-8"))
        (decision,) = decisions_for(PROGRAMS[name][0])
        assert (report["rule"], report["fix"]["kind"]) == (decision.code, str(decision.kind)), name
        if decision.kind is FixKind.NO_GRAD:
            assert report["fix"]["suggestion"] == "with torch.no_grad():\n    anchor = " + (
                "teacher(x0)" if "teacher" in name else "model(x0)")


@pytest.mark.torch
def test_the_snapshot_fix_keeps_every_value_the_program_computes() -> None:
    """Fixed, the programs print what the same program prints with the value detached by hand."""
    sources = {}
    for name in ("difference", "target", "teacher"):
        source = PROGRAMS[name][0]
        stem = name.replace(" ", "_")
        sources[f"{stem}_fixed.py"] = fixed(source)
        by_hand = source.replace("anchor = model(x0)\n", "anchor = model(x0).detach()\n")
        sources[f"{stem}_hand.py"] = by_hand.replace("anchor = teacher(x0)\n", "anchor = teacher(x0).detach()\n")
    runs = run_source_many(sources)
    for name in ("difference", "target", "teacher"):
        stem = name.replace(" ", "_")
        ours, theirs = runs[f"{stem}_fixed.py"], runs[f"{stem}_hand.py"]
        assert ours.error_type is None and theirs.error_type is None, (ours.traceback, theirs.traceback)
        assert ours.stdout == theirs.stdout
