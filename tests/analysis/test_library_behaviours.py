"""Library behaviours that keep a graph from one step to the next (issue 9): data built from model
outputs and batched by TensorDataset/DataLoader, forward hooks that store activations (a lambda
appending to a list; a pre-hook object keeping its module's inputs; a hook object's bound method
keeping the last output, read once as a target), `functools.lru_cache` / `cached_property`, the legacy `weight_norm` attribute,
`parametrize.cached()` around a loop, distributions kept across steps (built from tensors with a
graph, or from a leaf whose lazily computed `probs` they cache), dict caches, a
spiking layer's state reset in place (`self.mem.zero_()` keeps the old graph behind the zeros), and
state written in place: a memory bank refreshed from the embeddings with their graph
(`memory.index_copy_`), a queue of keys written under a graph that saved it, an EMA teacher whose
frozen parameters are blended from the student's outside `no_grad` (`t.mul_(m).add_((1 - m) * s)`),
a target network blended in place between its TD target and the backward, a running-scale buffer
updated in place from activations (before and after the batch is scaled by it), and an embedding
with `max_norm`, which renormalises its weight in place while a tied output layer has kept it.

Each program in `library/` is a small training script that runs under real torch:

- a buggy one (`# expect: GGnnn` on its failing line) raises the double-backward error there;
- `ok_<name>.py` is a correct program of the same kind, and runs;
- `fixed_<name>.py` is the fix a PyTorch user would write by hand for the buggy `<name>.py`, and
  runs;
- `variants/<name>__<rewrite>.py` is the buggy `<name>.py` rewritten mechanically (the loop moved
  into `train(model, loader, opt)` called under `if __name__ == "__main__":`, the `for` loops
  written as `while` loops, the backward under `if step % 1 == 0:`); it fails at its marked line;
- `packages/<name>/` is a program whose stateful class lives in a package beside its `train.py`
  (the loop in `train(model, ..., loader, optimizer)`), and `packages/fixed_<name>/` its hand fix;
  each runs as `python train.py` in a copy of its folder.

The analysis must flag exactly the marked lines and nothing in the ok and fixed programs. Where an
automatic fix is offered, the fixed program must run, be clean, and print what the hand-written
fixed twin prints. All programs run in one interpreter.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from gradguard.analysis import analyze
from gradguard.fixes import choose_fixes, fix_text_round
from gradguard.model import Diagnostic, Severity
from tests.fixture_support import (
    DOUBLE_BACKWARD_MESSAGE,
    INPLACE_MESSAGE,
    run_source_many,
)

LIBRARY = Path(__file__).resolve().parent / "library"
PROGRAMS = sorted(LIBRARY.glob("*.py"))
CLEAN = [p for p in PROGRAMS if p.name.startswith("ok_")]
FIXED = [p for p in PROGRAMS if p.name.startswith("fixed_")]
VARIANTS = sorted((LIBRARY / "variants").glob("*.py"))
BUGGY = [p for p in PROGRAMS if not p.name.startswith(("ok_", "fixed_"))] + VARIANTS
# Shapes with no automatic fix yet, and what it would take; their findings say what to do by hand.
BY_HAND = {
    "rotary_dict_cache": "emptying `model.rotary.cache` needs the module's name where the loop is",
    "weight_norm_read_before_forward": "the read belongs after the forward (a move across statements)",
    "parametrize_cached_around_loop": "`parametrize.cached()` belongs inside the loop, around one step",
    "pre_hook_keeps_inputs": "the list is filled in the hook object's `__call__` and is named `self.features` "
                             "there; emptying it in the loop needs `model.store.features`",
    "spiking_reset_in_place": "the reset belongs in the layer's `reset()` of the model's class (`self.mem = "
                              "torch.zeros_like(self.mem)`), a method the loop only calls",
    "hook_object_keeps_target": "the targets want the reference forward under `torch.no_grad()` (data built "
                                "without grad at its source), a fix kind the planner does not offer yet",
    "running_scale_updated_after_use": "the batch wants scaling by a copy of the buffer (`.clone()`), or the "
                                       "update moving under `torch.no_grad()` before the scaling",
    "embedding_max_norm_tied": "the norm constraint wants applying outside the forward (or the tied layer "
                               "reading a copy of the weight): a change of the model, not of one statement",
    "feature_queue_enqueued_before_backward": "the queue wants reading through a copy (`self.queue.clone()`) "
                                              "where the negatives are scored",
}
# What the analysis lacks today, by program: strict xfails, each to be dropped when the analysis
# learns it. OPEN: the finding test (a marked line missed or given another rule, or a finding in a
# correct program); OPEN_FIX: the automatic-fix test.
OPEN = {
}
OPEN_FIX: dict[str, str] = {
}
# The carrier each finding names, as the user would say it (the buggy program and its variants).
CARRIERS = {
    "ema_teacher_updated_with_grad": "teacher.parameters()",
    "ema_teacher_in_package": "self.module.parameters()",
    "embedding_max_norm_tied": "logits",
    "embedding_max_norm_tied_head": "self.wte.weight",
    "feature_queue_enqueued_before_backward": "negative",
    "memory_bank_index_copy": "self.memory",
    "memory_bank_in_package": "self.memory",
    "nce_memory_updated_in_forward": "self.memory",
    "running_scale_buffer_in_place": "self.running_scale",
    "running_scale_updated_after_use": "self.running_scale",
    "running_scale_two_views_in_package": "z1",
    "polyak_update_with_grad": "critic_target.parameters()",
    "soft_update_before_backward": "td_target",
    "cached_property_weights": "self.unit_prototypes",
    "distribution_built_once": "posterior",
    "distribution_lazy_probs": "self.gate",
    "hook_lambda_appends": "activations",
    "hook_object_keeps_target": "targets",
    "lru_cache_method": "self.relative_bias(x.shape[1])",
    "parametrize_cached_around_loop": "self.encoder.weight",
    "pre_hook_keeps_inputs": "self.features",
    "rotary_dict_cache": "self.cache",
    "spiking_reset_in_place": "self.mem",
    "tensor_dataset_of_model_outputs": "soft_labels",
    "weight_norm_read_before_forward": "model.blocks[1].conv.weight",
    "weight_norm_read_before_loop": "first_kernels",
}
# Carriers the analysis does not name yet (strict xfails): it names the loss instead.
OPEN_CARRIER = {
    "spiking_reset_in_place": "a state kept on a layer inside the model's forward (`self.mem` of each LIF) is "
                              "not found walking back from the loss: no read on the way is recorded as stale",
}
_EXPECT = re.compile(r"#\s*expect:\s*(GG\d{3})")
# What torch raises where a finding of these rules is (the others: a backward through a freed graph).
_ERRORS = {"GG011": INPLACE_MESSAGE}


def _base(path: Path) -> str:
    """The stem of the buggy program that `path` is (or is a variant of)."""
    return path.stem.split("__")[0]


def _twin(path: Path) -> Path:
    return LIBRARY / f"fixed_{_base(path)}.py"


def _cases(paths: list[Path], open_: dict[str, str]) -> list:
    return [pytest.param(p, id=p.stem, marks=[pytest.mark.xfail(strict=True, reason=open_[p.stem])]
                         if p.stem in open_ else []) for p in paths]


def _expected(path: Path) -> list[tuple[str, int]]:
    return [(m.group(1), row) for row, line in enumerate(path.read_text().splitlines(), 1)
            if (m := _EXPECT.search(line))]


def _errors_in(found: Iterable[Diagnostic]) -> list[tuple[str, int]]:
    return sorted((d.code, d.span.start.row) for d in found if d.severity is Severity.ERROR)


@cache
def _analysis(path: Path) -> tuple[list[tuple[str, int]], str | None]:
    """The program's errors, and its text after the automatic fixes (None when none is offered)."""
    errors, fixed, _ = _fixed(path)
    return errors, fixed


@cache
def _fixed(path: Path) -> tuple[list[tuple[str, int]], str | None, tuple[tuple[str, str], ...]]:
    """`_analysis`, with the texts the fixes give the modules beside the program (path relative to
    its folder, text): a fix whose edit belongs in the module where the cause sits."""
    source = path.read_text()
    found = analyze(source, path=str(path))
    fixes = choose_fixes(found, unsafe=True)
    if not fixes:
        return _errors_in(found), None, ()
    others: dict[str, str] = {}
    fixed = fix_text_round(source, fixes, others)[0]
    return _errors_in(found), fixed, tuple(sorted((str(Path(o).relative_to(path.parent)), t) for o, t in others.items()))


@pytest.fixture(scope="module")
def runs() -> dict[str, object]:
    sources = {p.name: p.read_text() for p in [*PROGRAMS, *VARIANTS]}
    sources.update({f"fixed:{p.name}": text for p in BUGGY if (text := _analysis(p)[1]) is not None})
    return run_source_many(sources, timeout=240)


def test_every_buggy_program_has_its_hand_fixed_twin() -> None:
    bases = {p.stem for p in BUGGY if p.parent == LIBRARY}
    assert {p.stem.removeprefix("fixed_") for p in FIXED} == bases
    assert {_base(p) for p in VARIANTS} <= bases


@pytest.mark.parametrize("path", _cases(BUGGY, OPEN))
def test_the_failing_line_is_flagged(path: Path) -> None:
    expected = _expected(path)
    assert expected, "a buggy program marks its failing line"
    assert _analysis(path)[0] == expected


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem, marks=[pytest.mark.xfail(
    strict=True, reason=OPEN_CARRIER[_base(p)])] if _base(p) in OPEN_CARRIER else []) for p in BUGGY])
def test_the_finding_names_the_carrier(path: Path) -> None:
    found = [d for d in analyze(path.read_text(), path=str(path)) if d.severity is Severity.ERROR]
    assert found and all(f"`{CARRIERS[_base(path)]}`" in d.message for d in found), [d.message for d in found]


@pytest.mark.parametrize("path", _cases(CLEAN + FIXED, OPEN))
def test_the_correct_program_is_not_flagged(path: Path) -> None:
    assert _analysis(path)[0] == []


@pytest.mark.parametrize("path", BUGGY, ids=lambda p: p.stem)
def test_torch_fails_where_the_finding_is(path: Path, runs: dict) -> None:
    outcome = runs[path.name]
    code, row = _expected(path)[0]
    assert outcome.raised(_ERRORS.get(code, DOUBLE_BACKWARD_MESSAGE)), outcome.traceback
    assert outcome.row == row


@pytest.mark.parametrize("path", CLEAN + FIXED, ids=lambda p: p.stem)
def test_the_correct_program_runs(path: Path, runs: dict) -> None:
    assert runs[path.name].ok, runs[path.name].traceback


@pytest.mark.parametrize("path", _cases(BUGGY, OPEN_FIX))
def test_the_offered_fix_runs_like_the_hand_fix(path: Path, runs: dict) -> None:
    key = f"fixed:{path.name}"
    assert (key not in runs) == (_base(path) in BY_HAND)
    if key in runs:
        assert runs[key].ok, runs[key].traceback
        assert _errors_in(analyze(_analysis(path)[1], path=str(path))) == []
        twin = runs[_twin(path).name]
        assert twin.ok and runs[key].stdout == twin.stdout


# -- programs whose stateful class lives in a package beside the script ----------------------------

PACKAGES = sorted(p for p in (LIBRARY / "packages").iterdir() if p.is_dir() and not p.name.startswith("fixed_"))
_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<row>\d+)')


@dataclass(frozen=True)
class _Run:
    """How `python train.py` ended in a copy of a package program's folder."""

    ok: bool
    stdout: str
    stderr: str
    row: int | None  # the innermost frame of the traceback in `train.py`


def _run_folder(folder: Path, into: Path, train: str | None = None, others: tuple[tuple[str, str], ...] = ()) -> _Run:
    copy = into / folder.name
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("__pycache__"))
    if train is not None:
        (copy / "train.py").write_text(train)
    for relative, text in others:
        (copy / relative).write_text(text)
    done = subprocess.run([sys.executable, "train.py"], cwd=copy, capture_output=True, text=True, timeout=240,
                          env={**os.environ, "OMP_NUM_THREADS": "1"}, check=False)
    rows = [int(m["row"]) for m in _FRAME.finditer(done.stderr) if Path(m["path"]).resolve() == copy / "train.py"]
    return _Run(done.returncode == 0, done.stdout, done.stderr, rows[-1] if rows else None)


@pytest.fixture(scope="module")
def package_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, _Run]:
    runs: dict[str, _Run] = {}
    for folder in PACKAGES:
        twin = folder.parent / f"fixed_{folder.name}"
        runs[folder.name] = _run_folder(folder, tmp_path_factory.mktemp("buggy"))
        runs[twin.name] = _run_folder(twin, tmp_path_factory.mktemp("fixed"))
        _, fixed, others = _fixed(folder / "train.py")
        if fixed is not None:
            runs[f"fix:{folder.name}"] = _run_folder(folder, tmp_path_factory.mktemp("fix"), fixed, others)
    return runs


@pytest.mark.parametrize("folder", PACKAGES, ids=lambda p: p.name)
def test_a_package_program_is_flagged_at_its_failing_line_naming_the_carrier(folder: Path) -> None:
    train = folder / "train.py"
    expected = _expected(train)
    assert expected, "a buggy program marks its failing line"
    assert _analysis(train)[0] == expected
    found = [d for d in analyze(train.read_text(), path=str(train)) if d.severity is Severity.ERROR]
    assert all(f"`{CARRIERS[folder.name]}`" in d.message for d in found), [d.message for d in found]


@pytest.mark.parametrize("folder", PACKAGES, ids=lambda p: p.name)
def test_a_package_program_s_hand_fix_is_not_flagged(folder: Path) -> None:
    assert _analysis(folder.parent / f"fixed_{folder.name}" / "train.py")[0] == []


@pytest.mark.parametrize("folder", PACKAGES, ids=lambda p: p.name)
def test_torch_fails_where_the_package_program_is_flagged_and_its_fix_runs(folder: Path, package_runs: dict) -> None:
    (code, row), = _expected(folder / "train.py")
    run = package_runs[folder.name]
    assert not run.ok and _ERRORS.get(code, DOUBLE_BACKWARD_MESSAGE) in run.stderr, run.stderr
    assert run.row == row
    twin = package_runs[f"fixed_{folder.name}"]
    assert twin.ok, twin.stderr
    fix = package_runs.get(f"fix:{folder.name}")
    if fix is not None:
        assert fix.ok and fix.stdout == twin.stdout, fix.stderr


def test_a_write_of_the_program_is_named_as_one_not_as_an_optimizer_step() -> None:
    # GG011 for a graph that saved a tensor the program then wrote in place (a target network blended
    # between its TD target and the backward; an embedding renormalised by its max_norm lookup).
    for name, written, row in (("soft_update_before_backward.py", "target.parameters()", 34),
                               ("embedding_max_norm_tied.py", "self.embed.weight", 25)):
        (found,) = analyze((LIBRARY / name).read_text(encoding="utf-8"))
        assert found.code == "GG011"
        assert f"the in-place write at line {row} has since changed `{written}`, which that graph saved" \
            in found.message, found.message
        assert "optimizer" not in found.message
        assert any(f"`{written}`, which the graph saved, written in place here" == r.message for r in found.related)


WRITTEN = ("memory_bank_index_copy.py", "running_scale_buffer_in_place.py")
MONITORED = """
import sys
sys.path.insert(0, {repo!r})
from gradguard.runtime.runner import run_program
raise SystemExit(run_program({path!r}, [], module=False, report={report!r}, deep=False))
"""


@pytest.mark.torch
def test_state_only_written_in_place_is_written_under_no_grad_by_both_halves(tmp_path: Path) -> None:
    # A memory bank filled by `index_copy_`, a running statistic by `mul_().add_()`: the program never
    # rebinds them, so the fix puts the writes under `torch.no_grad()`; the monitor decides the same
    # from the run (the tensor's version moved, it has a node, the loop never assigns it).
    from gradguard.rules import decisions_for

    repo = str(Path(__file__).resolve().parents[2])
    jobs = {name: MONITORED.format(repo=repo, path=str(LIBRARY / name), report=str(tmp_path / f"{name}.json"))
            for name in WRITTEN}
    run_source_many(jobs, timeout=240)
    for name in WRITTEN:
        (decision,) = decisions_for((LIBRARY / name).read_text(encoding="utf-8"))
        assert (decision.code, str(decision.kind)) == ("GG003", "no_grad")
        report = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
        assert (report["rule"], report["fix"]["kind"]) == ("GG003", "no_grad"), report["fix"]
        assert "with torch.no_grad():" in report["fix"]["suggestion"] or "no_grad" in report["fix"]["suggestion"]
