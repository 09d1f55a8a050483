"""`gradguard explain`: real tracebacks, from every buggy fixture run under torch (one interpreter), then the
same tracebacks buried in CI noise, moved to a CI machine's paths, and two DDP ranks interleaved."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import REPO, subprocess_env
from fixture_support import RunOutcome, buggy_fixtures, rule_of, run_many

from gradguard import catalogue
from gradguard.explain import clean_line, explain, parse_log, pick

INPLACE_SCRIPT = """\
import torch

w = torch.randn(3, requires_grad=True)
y = w.sigmoid()
y.mul_(2)
y.sum().backward()
"""
# The same write made through a name the analysis cannot follow: only a run can say which it was.
DYNAMIC_INPLACE_SCRIPT = INPLACE_SCRIPT.replace("y.mul_(2)", 'getattr(y, "mul_")(2)')


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, RunOutcome]:
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    inplace = tmp_path_factory.mktemp("inplace") / "inplace_step.py"
    inplace.write_text(INPLACE_SCRIPT, encoding="utf-8")
    dynamic = tmp_path_factory.mktemp("dynamic") / "dynamic_step.py"
    dynamic.write_text(DYNAMIC_INPLACE_SCRIPT, encoding="utf-8")
    # GG011's in-place error, which fixtures/buggy does not hold: the rule document's bad example.
    (bad,) = [example for example in catalogue.get("GG011").examples if example.kind == "bad"]
    stepped = tmp_path_factory.mktemp("stepped") / "actor_critic.py"
    stepped.write_text(bad.source, encoding="utf-8")
    paths = [path for path in buggy_fixtures() if path.suffix == ".py"] + [inplace, dynamic, stepped]
    return run_many(paths, timeout=900)


def _rule(report: str) -> str | None:
    for line in report.splitlines():
        if line.startswith("rule "):
            return line.split()[1]
    return None


def _double_backward(outcomes: dict[Path, RunOutcome]) -> dict[Path, RunOutcome]:
    found = {path: outcome for path, outcome in outcomes.items() if outcome.is_double_backward}
    assert len(found) >= 30
    return found


@pytest.mark.torch
def test_every_buggy_fixture_traceback_is_diagnosed_with_its_rule(outcomes: dict[Path, RunOutcome]) -> None:
    misses = []
    for path, outcome in _double_backward(outcomes).items():
        report, code = explain(outcome.traceback, REPO)
        if code != 0 or _rule(report) != rule_of(path):
            misses.append((path.name, rule_of(path), _rule(report), code))
            continue
        assert "(from the traceback)" in report and "(inferred without a run)" in report
        assert f"{path.relative_to(REPO)}:{outcome.row}" in report  # the failing call, from the traceback
    assert misses == []


@pytest.mark.torch
def test_the_diagnosis_names_freeing_call_carrier_and_fix(outcomes: dict[Path, RunOutcome]) -> None:
    path = REPO / "fixtures" / "buggy" / "gg003_gru_tensor_hidden.py"
    report, code = explain(outcomes[path].traceback, REPO)
    assert code == 0
    lines = report.splitlines()
    assert any(line.startswith("freeing call ") for line in lines)
    assert any(line.startswith("carrier ") and "`h` assigned here" in line for line in lines)
    assert any(line.startswith("fix (safe)") for line in lines)
    assert "+            h = h.detach()" in report


def _noisy_ci_log(traceback: str, moved_to: str) -> str:
    """A GitHub Actions log: timestamps, colours, pip noise, the traceback with paths of the CI machine."""
    lines = [
        "\x1b[36;1mpython train.py\x1b[0m",
        "Collecting torch==2.13.0",
        "epoch 0 step 3 loss 0.51234",
        "Traceback (most recent call last):",
        '  File "/opt/venv/lib/python3.11/site-packages/other.py", line 3, in <module>',
        "ValueError: an unrelated error earlier in the log",
        *traceback.replace(str(REPO), moved_to).splitlines(),
        "##[error]Process completed with exit code 1.",
    ]
    return "".join(f"2026-12-03T10:{i // 60:02d}:{i % 60:02d}.1234567Z {line}\n" for i, line in enumerate(lines))


@pytest.mark.torch
def test_a_ci_log_with_noise_and_a_ci_machines_paths(outcomes: dict[Path, RunOutcome]) -> None:
    for name in ("gg001_sam_second_step.py", "gg005_dcgan_synthetic.py", "gg007_wgan_gp.py"):
        path = REPO / "fixtures" / "buggy" / name
        log = _noisy_ci_log(outcomes[path].traceback, "/home/runner/work/project/project")
        report, code = explain(log, REPO)
        assert (code, _rule(report)) == (0, rule_of(path)), report


@pytest.mark.torch
def test_two_ddp_ranks_interleaved(outcomes: dict[Path, RunOutcome]) -> None:
    first = outcomes[REPO / "fixtures" / "buggy" / "gg003_gru_tensor_hidden.py"].traceback.splitlines()
    second = outcomes[REPO / "fixtures" / "buggy" / "gg001_sam_second_step.py"].traceback.splitlines()
    mixed = []
    for index in range(max(len(first), len(second))):
        if index < len(first):
            mixed.append(f"[rank0]: {first[index]}")
        if index < len(second):
            mixed.append(f"[rank1]: {second[index]}")
    mixed.append("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: train.py FAILED")
    tracebacks = parse_log("\n".join(mixed), REPO)
    assert sorted((t.rank, t.kind) for t in tracebacks) == [("0", "double-backward"), ("1", "double-backward")]
    report, code = explain("\n".join(mixed), REPO)
    assert code == 0 and "(rank 0)" in report and _rule(report) == "GG003"


@pytest.mark.torch
def test_the_inplace_error_is_recognised_and_said_to_need_a_run(outcomes: dict[Path, RunOutcome]) -> None:
    (path,) = [p for p in outcomes if p.name == "dynamic_step.py"]
    traceback = outcomes[path].traceback
    assert "modified by an inplace operation" in traceback
    found = pick(parse_log(traceback, path.parent))
    assert found is not None and found.kind == "inplace"
    report, code = explain(traceback, path.parent)
    assert code == 1
    assert "failing call   dynamic_step.py:6" in report and "gradguard run" in report


@pytest.mark.torch
def test_a_write_into_a_tensor_a_node_kept_is_diagnosed_without_a_run(outcomes: dict[Path, RunOutcome]) -> None:
    """`y = w.sigmoid(); y.mul_(2)`: sigmoid keeps its output, which the write changes (GG011)."""
    (path,) = [p for p in outcomes if p.name == "inplace_step.py"]
    report, code = explain(outcomes[path].traceback, path.parent)
    assert (code, _rule(report)) == (0, "GG011"), report
    assert any(line.startswith("related ") and "inplace_step.py:5" in line for line in report.splitlines()), report
    assert "y = y.clone()" in report


@pytest.mark.torch
def test_the_inplace_error_of_an_optimizer_step_is_diagnosed_as_gg011(outcomes: dict[Path, RunOutcome]) -> None:
    (path,) = [p for p in outcomes if p.name == "actor_critic.py"]
    traceback = outcomes[path].traceback
    assert "modified by an inplace operation" in traceback
    report, code = explain(traceback, path.parent)
    assert (code, _rule(report)) == (0, "GG011"), report
    lines = report.splitlines()
    assert any(line.startswith("in-place step ") and ".step()" in line for line in lines), report
    assert any(line.startswith("retained by ") and "retain_graph=True" in line for line in lines), report
    assert not any(line.startswith("freeing call ") for line in lines), report


def test_prefixes_are_removed() -> None:
    assert clean_line("2026-12-03T10:00:00.1234567Z [rank3]: File x") == ("3", "File x")
    assert clean_line("[default1]:2026-12-03 10:00:00,123 text") == ("1", "text")
    assert clean_line("\x1b[31mRuntimeError: boom\x1b[0m") == (None, "RuntimeError: boom")


def test_a_log_without_the_error_exits_2_and_stdin_works(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "gradguard", "explain"],
        input="all good\nepoch 3 loss 0.1\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=subprocess_env(),
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "No traceback" in result.stdout
    assert os.listdir(tmp_path) == []
