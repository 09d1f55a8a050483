"""Every buggy fixture rewritten mechanically (`metamorphic.py`: the loop in a function taking the model,
in a `Trainer` class holding `self.model`, definitions in another module, `for` as `while`, the
backward under a flag or under a test that calls, the loop's state kept in a dict or a tuple, each call
under a flag), fixed by
`--fix --unsafe-fixes`, must print exactly what its hand-written fix prints under the same rewrite.

Each variant gets one verdict: `equal` (trains like the hand fix), `different` (runs, other
numbers), `crashed` (a new error after the fix), `still-fails` (a fix was applied, the autograd
error stays) or `no-fix` (none offered). One test per rewrite: its variants are fixed in this process
and run, with their hand-fixed twins, in one interpreter. A fixed variant that is the very program of
its hand-fixed twin (same syntax tree, comments aside) prints what it prints: neither is run.

`GAPS` lists the variants that do not train like the hand fix yet, each with its verdict and what is
missing. It is strict: a variant that gets better must leave the table, and no variant may ever crash.

The whole campaign (every rewrite of every fixture, ~100 s on two quiet cores) runs with `GRADGUARD_LONG=1`, as
`python bench/bench_fix_variants.py` does. The test suite runs each rewrite on a third of the fixtures,
a different third for each rewrite (so that every fixture meets three rewrites), and on the fixtures
`GAPS` names for it.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest
from fixture_support import (
    RunOutcome,
    buggy_fixtures,
    fixed_for,
    fixture_source,
    run_many,
)
from metamorphic import REWRITES, variant_pair

from gradguard.config import Selection
from gradguard.engine import prepare
from gradguard.fixes import fix_prepared

ALL = Selection(select=("GG",), ignore=())

_DICT_ACCUMULATOR = "the analysis does not see a loss accumulated in a dict entry (`state['total'] += loss`)"
_TUPLE_ACCUMULATOR = ("an accumulator rebuilt into a tuple each step is GG003 on its temporary, not GG004; "
                      "detaching it may meet the Python number it starts as, so the fix is withheld")

_IN_BOTH_ARMS = ("the statement the fix edits (the forward to recompute, the loss to compute in the closure) is one "
                 "of two copies in the arms of an `if`; an edit of one copy leaves the finding on the other, so "
                 "the check withholds it")

_ROLLOUT_IN_BOTH_ARMS = ("with the rollout copied into both arms of an `if`, the analysis joins the two paths and "
                         "cannot tell which side of the ratio the old log-probabilities come in by, so the snapshot "
                         "fix is not chosen; recomputing the rollout in the loop would change `obs` and `actions` "
                         "too, so that fix is withheld")

_ACCUMULATION_READ_AS_PERIODIC = ("with the backward under a test, the sum reads as gradient accumulation and is "
                                  "reset after its backward; the hand fix keeps a running Python number: both "
                                  "stop the error, the printed averages differ")

# (fixture stem, rewrite) -> (verdict, what is missing)
GAPS: dict[tuple[str, str], tuple[str, str]] = {
    ("gg004_epoch_loss_backward_in_loop", "state-in-a-dict"): ("no-fix", _DICT_ACCUMULATOR),
    ("gg004_grad_accum_not_reset", "state-in-a-dict"): ("no-fix", _DICT_ACCUMULATOR),
    ("gg004_total_loss_iadd", "state-in-a-dict"): ("no-fix", _DICT_ACCUMULATOR),
    ("gg004_epoch_loss_backward_in_loop", "state-in-a-tuple"): ("no-fix", _TUPLE_ACCUMULATOR),
    ("gg004_grad_accum_not_reset", "state-in-a-tuple"): ("no-fix", _TUPLE_ACCUMULATOR),
    ("gg004_total_loss_iadd", "state-in-a-tuple"): ("no-fix", _TUPLE_ACCUMULATOR),
    ("gg001_sam_second_step", "calls-under-flags"): ("no-fix", _IN_BOTH_ARMS),
    ("gg001_lbfgs_closure_outside_loss", "calls-under-flags"): ("no-fix", _IN_BOTH_ARMS),
    ("gg004_total_loss_iadd", "backward-under-a-call"): ("different", _ACCUMULATION_READ_AS_PERIODIC),
    ("gg004_epoch_loss_backward_in_loop", "backward-under-a-call"): ("different", _ACCUMULATION_READ_AS_PERIODIC),
    ("gg006_epoch_prototypes_as_targets", "calls-under-flags"): ("no-fix", _IN_BOTH_ARMS),
    ("gg006_ppo_old_log_probs", "calls-under-flags"): ("no-fix", _ROLLOUT_IN_BOTH_ARMS),
    ("gg010_running_loss_tensor", "state-in-a-dict"): (
        "no-fix", "the analysis does not see loss tensors kept in a dict entry across steps (GG010)"),
}

# The suite's share of the campaign: one fixture in SAMPLE per rewrite.
SAMPLE = 3


def _fixtures_for(rewrite: str) -> list[Path]:
    fixtures = buggy_fixtures()
    if os.environ.get("GRADGUARD_LONG", "") not in ("", "0"):
        return fixtures
    offset = sorted(REWRITES).index(rewrite) % SAMPLE
    return [f for i, f in enumerate(fixtures) if i % SAMPLE == offset or (f.stem, rewrite) in GAPS]


# Each program imports `lib` from its own folder: a fresh import per program.
PRELUDE = """
import os, sys
def before_fixture(name):
    sys.modules.pop("lib", None)
    sys.path.insert(0, os.path.dirname(name))
def after_fixture(name, exc):
    sys.path.remove(os.path.dirname(name))
"""


def _verdict(applied: int, ours: RunOutcome, theirs: RunOutcome) -> str:
    if applied == 0:
        return "no-fix"
    if not ours.ok:
        return "still-fails" if ours.is_double_backward or ours.raised("inplace") else "crashed"
    return "equal" if ours.stdout == theirs.stdout else "different"


def _same_program(ours: Path, theirs: Path) -> bool:
    """Whether two folders hold the same programs (file by file, the same syntax tree)."""
    names = sorted(p.name for p in ours.iterdir())
    return names == sorted(p.name for p in theirs.iterdir()) and all(
        ast.dump(ast.parse((ours / n).read_text())) == ast.dump(ast.parse((theirs / n).read_text())) for n in names)


@pytest.mark.torch
@pytest.mark.parametrize("rewrite", sorted(REWRITES))
def test_fixed_variants_train_like_the_hand_fix(rewrite: str, tmp_path: Path) -> None:
    applied: dict[str, int] = {}
    for fixture in _fixtures_for(rewrite):
        pair = variant_pair(rewrite, fixture_source(fixture), fixture_source(fixed_for(fixture)))
        if pair is None:
            continue
        for side, files in zip(("bug", "hand"), pair, strict=True):
            folder = tmp_path / fixture.stem / side
            folder.mkdir(parents=True)
            for name, text in files.items():
                (folder / name).write_text(text, encoding="utf-8")
        script = tmp_path / fixture.stem / "bug" / "train.py"
        others: dict[str, str] = {}  # the fixes may edit `lib.py`, where the cause sits
        fixed, _, count, note = fix_prepared(prepare(script.read_bytes(), str(script)), ALL, unsafe=True,
                                             others=others)
        assert note is None, f"{fixture.stem}: {note}"
        script.write_text(fixed.source, encoding="utf-8")
        for other, text in others.items():
            Path(other).write_text(text, encoding="utf-8")
        applied[fixture.stem] = count
    identical = {stem for stem in applied if _same_program(tmp_path / stem / "bug", tmp_path / stem / "hand")}
    runs = run_many([tmp_path / stem / side / "train.py" for stem in applied if stem not in identical
                     for side in ("bug", "hand")], prelude=PRELUDE, timeout=600)
    verdicts: dict[str, str] = {}
    for stem, count in applied.items():
        if stem in identical:
            verdicts[stem] = "equal"
            continue
        theirs = runs[tmp_path / stem / "hand" / "train.py"]
        assert theirs.ok, f"the rewrite broke the hand fix of {stem}:\n{theirs.traceback}"
        verdicts[stem] = _verdict(count, runs[tmp_path / stem / "bug" / "train.py"], theirs)
        assert verdicts[stem] != "crashed", f"{stem} crashes after the fix:\n" \
            f"{(tmp_path / stem / 'bug' / 'train.py').read_text()}\n{runs[tmp_path / stem / 'bug' / 'train.py'].traceback}"
    expected = {stem: GAPS.get((stem, rewrite), ("equal", ""))[0] for stem in applied}
    assert verdicts == expected
    assert {stem for stem, r in GAPS if r == rewrite} <= set(applied), "a gap names a variant that is not made"
