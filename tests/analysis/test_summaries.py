"""Summaries of calls (`analysis/summaries.py`): a call run for its result only is analysed once per
distinct input, a summary is taken only where every input the call reads is the same, and the
findings never depend on whether a summary was taken."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import libcst as cst
import pytest

from gradguard.analysis import analyze, summaries
from gradguard.analysis.conditions import Atom
from gradguard.analysis.state import State
from gradguard.analysis.summaries import Recorder, Summaries
from gradguard.analysis.values import GENERATIONS, NONE, SCALAR, Freed, Kind, Value

# -- the summaries themselves ---------------------------------------------------------------------


def _atom(key: str, truth: bool, deps: frozenset[str] = frozenset()) -> Atom:
    return Atom(key, truth, deps or frozenset({key}), frozenset(), 1, 1, key)


def _state(**atoms: bool) -> State:
    state = State()
    state.frames[0]["model"] = Value(Kind.MODULE)
    for key, truth in atoms.items():
        state.assume[key] = _atom(key, truth)
    return state


_SITE = ("site",)
_ARGS = [(None, SCALAR)]


def _made_by(change: Callable[[State], None]) -> Summaries:
    """The summary of a run from a plain state that made `change` to it."""
    state = _state()
    made = Summaries()
    started = made.begin(_ARGS, {}, None, state, False)
    change(state)
    made.keep(_SITE, started, state, NONE, Recorder())
    return made


def _kept(state: State, recorder: Recorder, result: Value = NONE) -> Summaries:
    made = Summaries()
    started = made.begin(_ARGS, {}, None, state, False)
    made.keep(_SITE, started, state, result, recorder)
    return made


def test_a_call_that_changed_nothing_is_found_again_from_the_same_inputs() -> None:
    state = _state(flag=True)
    made = _kept(state, Recorder(consulted={"flag"}))
    assert made.find(_SITE, _ARGS, {}, None, _state(flag=True), False) is not None
    assert made.find(_SITE, _ARGS, {}, None, _state(flag=False), False) is None
    assert made.find(_SITE, [(None, NONE)], {}, None, _state(flag=True), False) is None


def test_conditions_the_call_never_read_do_not_tell_its_inputs_apart() -> None:
    made = _kept(_state(flag=True, other=True), Recorder(consulted={"flag"}))
    assert made.find(_SITE, _ARGS, {}, None, _state(flag=True), False) is not None
    assert made.find(_SITE, _ARGS, {}, None, _state(flag=True, other=False, third=True), False) is not None


def test_a_condition_over_what_the_call_assigns_is_never_carried_past_it() -> None:
    """The run assigned `step`: a path assuming `step % k == 0` would lose that condition in the call,
    which the summary (made on a path without it) does not replay."""
    made = _kept(_state(flag=True), Recorder(consulted={"flag"}, assigned={("step", None, None)}))
    later = _state(flag=True)
    later.assume["((step % k) == 0)"] = _atom("((step % k) == 0)", True, frozenset({"step", "k"}))
    assert made.find(_SITE, _ARGS, {}, None, later, False) is None


def test_a_call_that_stored_a_graph_is_not_kept() -> None:
    state = _state()
    made = Summaries()
    started = made.begin(_ARGS, {}, None, state, False)
    state.heap[("Net", "h")] = Value(Kind.TENSOR, frozenset({60}))
    made.keep(_SITE, started, state, NONE, Recorder())
    assert made.find(_SITE, _ARGS, {}, None, state, False) is None


def _forward_run(before: State) -> tuple[Summaries, Value]:
    """A model's forward, run from `before`: site 10 evaluated once, its node returned."""
    made = Summaries()
    started = made.begin(_ARGS, {}, None, before, False)
    if before.epochs.get(10):
        before.rename_site(10)
    before.epochs[10] = before.epochs.get(10, 0) + 1
    result = Value(Kind.TENSOR, frozenset({10 * GENERATIONS}), frozenset({10 * GENERATIONS}), True)
    made.keep(_SITE, started, before, result, Recorder())
    return made, result


def test_a_call_that_returned_a_graph_is_kept_and_ages_the_callers_nodes_of_its_sites() -> None:
    # The previous iteration's output, held by the caller, is one evaluation older once the forward
    # runs again: the replay makes it so, as the run itself did.
    first = _state()
    first.epochs[10] = 1
    first.frames.append({"previous": Value(Kind.TENSOR, frozenset({10 * GENERATIONS}), frozenset(), True)})
    made, result = _forward_run(first)
    assert first.frames[1]["previous"].nodes == {10 * GENERATIONS + 1}
    later = _state()
    later.epochs[10] = 4
    later.frames.append({"previous": Value(Kind.TENSOR, frozenset({10 * GENERATIONS}), frozenset(), True)})
    summary = made.find(_SITE, _ARGS, {}, None, later, False)
    assert summary is not None
    assert Summaries.replay(summary, later) is result
    assert later.epochs[10] == 5
    assert later.frames[1]["previous"].nodes == {10 * GENERATIONS + 1}


def test_freed_nodes_of_the_calls_sites_tell_its_inputs_apart() -> None:
    made, _ = _forward_run(_state())
    freed = _state()
    freed.freed[10 * GENERATIONS] = Freed(None)  # type: ignore[arg-type]
    assert made.find(_SITE, _ARGS, {}, None, freed, False) is None
    assert made.find(_SITE, _ARGS, {}, None, _state(), False) is not None


def test_facts_counted_by_evaluation_are_replayed_at_the_counts_of_the_state_taken_in() -> None:
    # What a module call's node keeps is recorded by (site, evaluation): a summary taken three
    # evaluations later records it three evaluations later.
    shifted = summaries.shift_entry(("calls", 10, 1, frozenset({"generator"})), {10: 3}.get)
    assert shifted == ("calls", 10, 4, frozenset({"generator"}))
    made = summaries.shift_entry(("made", (4, 2), 10, 1), lambda site: {4: 1, 10: 3}[site])
    assert made == ("made", (4, 3), 10, 4)
    assert summaries.shift_entry(("by", ("generator",), 10, 1), lambda site: 2) == ("by", ("generator",), 10, 3)


def test_the_callers_locals_are_inputs_of_a_closure_only_as_far_as_its_code_names_them() -> None:
    state = _state()
    state.frames.append({"x": SCALAR, "y": SCALAR})
    made = Summaries()
    made.keep(_SITE, made.begin(_ARGS, {}, None, state, False), state, NONE, Recorder())
    later = _state()
    later.frames.append({"x": NONE, "y": SCALAR})
    assert made.find(_SITE, _ARGS, {}, None, later, False) is not None
    closure = Summaries()
    body = cst.parse_statement("def helper(a):\n    return a + x\n")
    closure.keep(_SITE, closure.begin(_ARGS, {}, None, state, True), state, NONE, Recorder(functions={body}))
    assert closure.find(_SITE, _ARGS, {}, None, later, True) is None
    elsewhere = _state()
    elsewhere.frames.append({"x": SCALAR, "y": NONE})
    assert closure.find(_SITE, _ARGS, {}, None, elsewhere, True) is not None


def test_globals_are_inputs_only_as_far_as_the_code_the_call_ran_names_them() -> None:
    # A function reads a global only by naming it (in its own code or a callee's): a training loop at
    # module level that rebinds its own variables does not keep its validation routine from reuse.
    body = cst.parse_statement("def validate(cfg):\n    return cfg.size + threshold\n")
    state = _state()
    state.frames[0].update({"threshold": SCALAR, "step": SCALAR})
    made = Summaries()
    made.keep(_SITE, made.begin(_ARGS, {}, None, state, False), state, NONE, Recorder(functions={body}))
    later = _state()
    later.frames[0].update({"threshold": SCALAR, "step": NONE})
    later.defs[0]["step"] = frozenset({body})
    assert made.find(_SITE, _ARGS, {}, None, later, False) is not None
    changed = _state()
    changed.frames[0].update({"threshold": NONE, "step": SCALAR})
    assert made.find(_SITE, _ARGS, {}, None, changed, False) is None


def test_freed_nodes_are_inputs_only_at_the_sites_the_call_evaluated() -> None:
    made = _made_by(lambda state: state.epochs.__setitem__(7, 1))
    elsewhere = _state()
    elsewhere.freed[3 * GENERATIONS] = Freed(None)  # type: ignore[arg-type]
    assert made.find(_SITE, _ARGS, {}, None, elsewhere, False) is not None
    own = _state()
    own.freed[7 * GENERATIONS + 1] = Freed(None)  # type: ignore[arg-type]
    assert made.find(_SITE, _ARGS, {}, None, own, False) is None


def test_a_summary_replays_how_often_each_site_ran() -> None:
    made = _made_by(lambda state: state.epochs.__setitem__(7, 2))
    later = _state()
    later.epochs[7] = 5
    summary = made.find(_SITE, _ARGS, {}, None, later, False)
    assert summary is not None
    Summaries.replay(summary, later)
    assert later.epochs[7] == 7


def test_a_run_that_forgot_freed_nodes_nothing_held_is_kept_and_its_replay_forgets_them_too() -> None:
    # A join inside the call drops the freed record of a node no variable holds any more (an older
    # iteration's loss): housekeeping, not an effect of the call. Its replay drops the record where
    # nothing holds the node, and keeps it where something does (a caller's local).
    stale = 3 * GENERATIONS + 1

    def caller(loss: Value | None = None) -> State:
        state = _state()
        state.frames.append({} if loss is None else {"loss": loss})
        state.freed[stale] = Freed(None)  # type: ignore[arg-type]
        return state

    state = caller()
    made = Summaries()
    started = made.begin(_ARGS, {}, None, state, False)
    state.freed.pop(stale)
    assert made.keep(_SITE, started, state, NONE, Recorder()) is not None
    later = caller()
    summary = made.find(_SITE, _ARGS, {}, None, later, False)
    assert summary is not None and summary.collected == {stale}
    Summaries.replay(summary, later)
    assert stale not in later.freed
    holding = caller(Value(Kind.TENSOR, frozenset({stale}), frozenset(), True))
    summary = made.find(_SITE, _ARGS, {}, None, holding, False)
    assert summary is not None
    Summaries.replay(summary, holding)
    assert stale in holding.freed


def test_a_run_that_forgot_a_freed_node_something_still_holds_is_not_kept() -> None:
    held = 3 * GENERATIONS + 1

    def forget(state: State) -> None:
        state.frames[0]["loss"] = Value(Kind.TENSOR, frozenset({held}), frozenset(), True)
        state.freed.pop(held)

    state = _state()
    state.frames[0]["loss"] = Value(Kind.TENSOR, frozenset({held}), frozenset(), True)
    state.freed[held] = Freed(None)  # type: ignore[arg-type]
    made = Summaries()
    started = made.begin(_ARGS, {}, None, state, False)
    forget(state)
    assert made.keep(_SITE, started, state, NONE, Recorder()) is None


# -- whole programs -------------------------------------------------------------------------------


_TRAINER = """
import torch
import torch.nn as nn
import torch.nn.functional as F


def log_validation(model, loader, trackers, step, final=False):
    images = []
    if final:
        model = model.eval()
    for batch in loader:
        with torch.no_grad():
            out = model(batch)
        for image in out:
            images.append(image)
    for tracker in trackers:
        if tracker.name == "tensorboard":
            for image in images:
                tracker.writer.add_image("val", image, step)
        elif tracker.name == "wandb":
            for image in images:
                tracker.log({"val": image})
    return images


def train(model, loader, val_loader, optimizer, trackers, args):
    global_step = 0
    hidden = None
    for epoch in range(args.epochs):
        for batch in loader:
            out, hidden = model(batch, hidden)
            loss = F.mse_loss(out, batch)
            if args.clip is not None:
                loss = loss.clamp(max=args.clip)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            DETACH
            global_step += 1
            if global_step % args.checkpointing_steps == 0:
                torch.save(model.state_dict(), f"ckpt-{global_step}.pt")
            if global_step % args.validation_steps == 0:
                log_validation(model, val_loader, trackers, global_step)
    log_validation(model, val_loader, trackers, global_step, final=True)
"""


def _disabled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(summaries, "MAX_PER_SITE", 0)


def _replayed(monkeypatch: pytest.MonkeyPatch) -> list[set[str]]:
    """Records, for each summary replayed from now on, the names of the functions its run ran."""
    found: list[set[str]] = []
    original = Summaries.replay

    def replay(summary: summaries.Summary, state: State, tables: summaries.ReplayTarget | None = None) -> Value:
        found.append({function.name.value for function in summary.recorder.functions})  # type: ignore[attr-defined]
        return original(summary, state, tables)

    monkeypatch.setattr(Summaries, "replay", staticmethod(replay))
    return found


@pytest.mark.parametrize(("detach", "expected"), [("pass", ["GG003"]), ("hidden = hidden.detach()", [])])
def test_a_validation_routine_in_the_training_loop_is_analysed_once_per_input(
        monkeypatch: pytest.MonkeyPatch, detach: str, expected: list[str]) -> None:
    found = _replayed(monkeypatch)
    source = textwrap.dedent(_TRAINER).replace("DETACH", detach)
    with_summaries = [(d.span.start.row, d.code) for d in analyze(source)]
    assert [code for _, code in with_summaries] == expected
    assert any("log_validation" in ran for ran in found), "the validation routine was analysed again at every call"
    _disabled(monkeypatch)
    assert [(d.span.start.row, d.code) for d in analyze(source)] == with_summaries


def _fixtures() -> list[Path]:
    from fixture_support import buggy_fixtures, clean_fixtures, fixed_fixtures

    return [p for p in [*buggy_fixtures(), *clean_fixtures(), *fixed_fixtures()] if p.suffix == ".py"]


_REDUCTIONS = Path(__file__).resolve().parents[2] / "bench" / "realcode_reductions"


def _fixtures_and_reductions() -> list[Path]:
    # r50 (three datasets through one evaluation function) once had a false GG007 with summaries
    # only: summaries were refused where a join inside the helper forgot freed nodes nothing held.
    return [*_fixtures(), _REDUCTIONS / "r50_image_target_loaded_through_a_dataset_attribute.py"]


@pytest.mark.parametrize("path", _fixtures_and_reductions(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_fixture_has_the_same_findings_without_summaries(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    with_summaries = [(d.span.start.row, d.code, d.message) for d in analyze(source, path=str(path))]
    _disabled(monkeypatch)
    assert [(d.span.start.row, d.code, d.message) for d in analyze(source, path=str(path))] == with_summaries


def test_attributes_a_call_set_to_values_without_a_graph_are_replayed() -> None:
    made = _made_by(lambda state: state.heap.__setitem__(("Boxes", "tensor"), SCALAR))
    later = _state()
    summary = made.find(_SITE, _ARGS, {}, None, later, False)
    assert summary is not None
    Summaries.replay(summary, later)
    assert later.heap[("Boxes", "tensor")] is SCALAR


def test_heap_entries_the_call_never_touched_do_not_tell_its_inputs_apart() -> None:
    """An evaluator object's counters change between two calls of a helper that never reads them:
    the summary holds. An entry it read, or one a scan of its covers, does not."""
    state = _state()
    state.heap[("Meter", "count")] = SCALAR
    state.heap[("Boxes", "tensor")] = SCALAR
    state.heap[("<opaque>", "logger.rows")] = SCALAR
    state.epochs[7] = 1
    recorder = Recorder(heap_keys={("Boxes", "tensor")}, heap_scans={("<opaque>", "logger.")})
    made = _kept(state, recorder)

    def later(key: tuple[str, str], value: Value) -> State:
        changed = _state()
        changed.heap.update(state.heap)
        changed.heap[key] = value
        changed.epochs[7] = 1
        return changed

    assert made.find(_SITE, _ARGS, {}, None, later(("Meter", "count"), NONE), False) is not None
    assert made.find(_SITE, _ARGS, {}, None, later(("Meter", "total"), NONE), False) is not None
    assert made.find(_SITE, _ARGS, {}, None, later(("Boxes", "tensor"), NONE), False) is None
    assert made.find(_SITE, _ARGS, {}, None, later(("<opaque>", "logger.rows"), NONE), False) is None
    assert made.find(_SITE, _ARGS, {}, None, later(("<opaque>", "logger.cols"), NONE), False) is None


def test_heap_entries_holding_nodes_of_the_calls_sites_are_inputs() -> None:
    """A site the call evaluates ages its nodes wherever they are held: an entry holding one is an
    input even if the call never reads it."""
    made = _made_by(lambda state: state.epochs.__setitem__(7, 1))
    elsewhere = _state()
    elsewhere.heap[("Meter", "last")] = Value(Kind.TENSOR, frozenset({3 * GENERATIONS}))
    assert made.find(_SITE, _ARGS, {}, None, elsewhere, False) is not None
    own = _state()
    own.heap[("Meter", "last")] = Value(Kind.TENSOR, frozenset({7 * GENERATIONS}))
    assert made.find(_SITE, _ARGS, {}, None, own, False) is None


def test_an_evaluation_helper_is_summarised_while_the_loop_changes_other_objects() -> None:
    """detectron2's shape: on each path through the training step the loop updates its own objects
    differently; the evaluation helper never reads them, so one analysis of it serves every path."""
    source = textwrap.dedent('''
        import torch
        import torch.nn.functional as F


        class Meter:
            def __init__(self):
                self.count = 0
                self.spikes = 0
                self.skipped = 0
                self.last = None


        def evaluate(model, loader):
            correct = 0
            with torch.no_grad():
                for x, y in loader:
                    correct += (model(x).argmax(1) == y).sum().item()
            return correct


        def train(model, loader, optimizer, args):
            meter = Meter()
            for step, (x, y) in enumerate(loader):
                loss = F.cross_entropy(model(x), y)
                if loss.item() > args.spike:
                    meter.spikes = meter.spikes + 1
                    meter.last = "spike"
                if torch.isnan(loss):
                    meter.skipped = meter.skipped + 1
                    meter.last = "nan"
                    continue
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                if step % args.eval_every == 0:
                    evaluate(model, loader)
            return meter
    ''')
    ran: list[str] = []
    original = Summaries.keep

    def keep(self: Summaries, site: tuple, started: tuple, state: State, result: Value, recorder: Recorder) -> None:
        ran.extend(f.name.value for f in recorder.functions if isinstance(f, cst.FunctionDef))
        original(self, site, started, state, result, recorder)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Summaries, "keep", keep)
        assert not analyze(source)
    assert ran.count("evaluate") <= 2, ran


_PERCEPTUAL = """
import torch
import torch.nn as nn
import torch.nn.functional as F


def normalize(feat, eps=1e-10):
    return feat / (feat.norm(dim=1, keepdim=True) + eps)


class PerceptualLoss(nn.Module):
    def __init__(self, decoder, norm_type="default", outlier_mask=False):
        super().__init__()
        self.decoder = decoder
        self.norm_type = norm_type
        self.outlier_mask = outlier_mask
        self.last_stats = []

    def features(self, z):
        feats = []
        for block in self.decoder:
            z = block(z)
            feats.append(z)
        return feats

    def get_loss(self, prediction, target):
        losses = []
        self.last_stats = []
        for i, (x, y) in enumerate(zip(self.features(prediction), self.features(target))):
            mask = torch.ones_like(y)
            if self.outlier_mask:
                with torch.no_grad():
                    mask = (y.abs() < 3).float()
            with torch.no_grad():
                self.last_stats.append({"mean": y.mean().item()})
            if self.norm_type == "default":
                x, y = normalize(x), normalize(y)
            elif self.norm_type == "shared":
                x, y = x / y.norm(), y / y.norm()
            losses.append((F.mse_loss(x, y, reduction="none") * mask).mean())
        return sum(losses) / len(losses)


def train(model, decoder, loader, optimizer, args):
    perceptual = PerceptualLoss(decoder, args.norm_type, args.outlier_mask) if args.use_lpl else None
    hidden = None
    global_step = 0
    for epoch in range(args.epochs):
        for batch in loader:
            out, hidden = model(batch, hidden)
            loss = F.mse_loss(out, batch)
            if perceptual is not None and global_step >= args.lpl_start:
                loss = loss + args.lpl_weight * perceptual.get_loss(out, batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            DETACH
            global_step += 1
"""


@pytest.mark.parametrize(("detach", "expected"), [("pass", ["GG003"]), ("hidden = hidden.detach()", [])])
def test_a_loss_helper_whose_paths_disagree_on_its_settings_is_summarised(
        monkeypatch: pytest.MonkeyPatch, detach: str, expected: list[str]) -> None:
    # `if self.outlier_mask:` and `if self.norm_type == ...` split the caller's paths (the object's
    # settings are flags): the summary notes those flags again at each replay instead of the call
    # being analysed anew at every pass of the loops around it.
    found = _replayed(monkeypatch)
    source = textwrap.dedent(_PERCEPTUAL).replace("DETACH", detach)
    with_summaries = [(d.span.start.row, d.code, d.message) for d in analyze(source)]
    assert [code for _, code, _ in with_summaries] == expected
    assert any("get_loss" in ran for ran in found), "the loss helper was analysed again at every call"
    _disabled(monkeypatch)
    assert [(d.span.start.row, d.code, d.message) for d in analyze(source)] == with_summaries


_GRAD_LOGGING = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class AverageMeter:
    def __init__(self):
        self.val = 0.0
        self.sum = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n


def log_grad_norm(model, history, step):
    for name, param in model.named_parameters():
        if param.grad is not None:
            history.append((step, name, param.grad.detach().norm().item()))


def train(model, loader, optimizer, args):
    meter = AverageMeter()
    history = []
    step = 0
    for epoch in range(args.epochs):
        for x, y in loader:
            out = model(x)
            loss = F.cross_entropy(out, y)
            optimizer.zero_grad()
            loss.backward()
            if step % args.log_every == 0:
                log_grad_norm(model, history, step)
            SECOND
            optimizer.step()
            meter.update(loss.item(), x.size(0))
            step += 1
"""


@pytest.mark.parametrize(("second", "expected"), [("pass", []), ("out.sum().backward()", ["GG002"])])
def test_a_helper_that_reads_gradients_or_updates_a_meter_is_summarised(
        monkeypatch: pytest.MonkeyPatch, second: str, expected: list[str]) -> None:
    # Reading `p.grad` marks every freed graph as one whose gradients were used (which fix fits), and
    # `self.count += n` sets an attribute to a value like the one it had: both are replayed, not a
    # reason to analyse the helper again at every call.
    found = _replayed(monkeypatch)
    source = textwrap.dedent(_GRAD_LOGGING).replace("SECOND", second)
    with_summaries = [(d.span.start.row, d.code, d.message, d.fix) for d in analyze(source)]
    assert [code for _, code, _, _ in with_summaries] == expected
    assert {"log_grad_norm", "update"} <= set().union(*found), "the helpers were analysed again at every call"
    _disabled(monkeypatch)
    assert [(d.span.start.row, d.code, d.message, d.fix) for d in analyze(source)] == with_summaries
