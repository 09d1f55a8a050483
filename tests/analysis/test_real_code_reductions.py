"""Reductions of correct public training code that gradguard once flagged (`bench/realcode_reductions/`:
`NN_*` from the pinned real-code corpus, `r01`-`r13` from the first real-code audit, `r14` on from the
second audit of the pinned corpus; each runs fine under torch): no error-level finding on any of them. The shapes are the model's
causes (correlated conditions, detaching branches, helpers and classes in other modules), not
special cases; the ones the model still gets wrong are strict xfails naming what it lacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradguard.analysis import analyze
from gradguard.config import Settings
from gradguard.engine import Prepared, check_source, syntax_error
from gradguard.model import Severity

REDUCTIONS = Path(__file__).resolve().parents[2] / "bench" / "realcode_reductions"
# Reductions the model does not get right yet: stem -> what it lacks (strict xfails).
OPEN: dict[str, str] = {
    "r42_phase_counter_recomputes_teacher_outputs": "a counter advanced by one each iteration, tested "
    "modulo the cycle length: after the last generator step (`idx % n < g`), the next iteration is the "
    "first student step (`idx % n == g`), which recomputes the teacher's outputs without grad; the model "
    "takes the residues of consecutive iterations as independent",
    "r54_per_model_sums_with_the_neighbours_detached_by_a_table_test": "each subdomain model's loss keeps "
    "only its own graph, the neighbours detached by a test over a table (`im2 == im`), one backward and "
    "one step per model: the detaching test is not tied to the model being trained",
    "r57_gmvandeven_classifier_replay_loss_arms": "r47's belief in the real file's form: the tests of "
    "`use_replay` (membership, equalities, a flag from them) are not kept together across the arms",
    "r58_gmvandeven_classifier_stream_replay_loss_arms": "the same, in the stream classifier's form",
    "r59_deq_memory_through_dataparallel_subclass_two_modes": "r48's belief in deq's two training modes",
    "r60_trades_input_grad_leaves_the_natural_target_graph": "TRADES: `torch.autograd.grad` of the "
    "attack's KL over the adversarial input runs none of the natural target's nodes, yet is taken to free "
    "the graph the training loss later goes through (GG007)",
    "r61_trades_l2_delta_stepped_by_its_own_optimizer": "TRADES' L2 attack steps `delta` (a leaf no saved "
    "graph holds) with its own optimizer: taken to change what the natural target saved (false GG011); the "
    "GG006 it keeps is true (the natural forward kept alive with retain_graph=True across the attack steps)",
    "r62_losses_named_by_dict_zip_two_optimizers_two_arms": "pix2pixHD: losses named through "
    "`dict(zip(names, losses))`, the generator's and the discriminator's taken to share a graph (GG002 in "
    "both the AMP and the plain arm)",
    "r64_attention_state_reset_at_the_first_decoder_step": "Tacotron's cumulative attention reset when "
    "`t == 0` inside the decoder loop: taken as carried across training steps (GG003)",
    "r65_rollout_namedtuple_rebuilt_by_a_reset_method": "A3C's rollout namedtuple rebuilt by a reset method "
    "at the start of each rollout: taken as carrying the previous one's graph (GG003)",
    "r66_acer_two_stage_backward_over_a_rebuilt_rollout": "ACER's two-stage backward over a rollout rebuilt "
    "each episode: GG001 and GG003 here (GG006 on the original file)",
    "r48_memory_detached_behind_a_dataparallel_subclass": "a DataParallel subclass's own forward "
    "(`scatter`, `replicate`, `parallel_apply`, `gather` inherited from torch) joins what the wrapped "
    "module returns into one value with the loss's graph, so the detached memory fed back seems to "
    "carry it",
}


def _cases() -> list[object]:
    files = sorted(p for p in REDUCTIONS.glob("*.py") if p.name[0].isdigit()
                   or (p.name[0] == "r" and p.name[1].isdigit() and "helpers" not in p.name))
    return [pytest.param(p, id=p.stem, marks=[pytest.mark.xfail(strict=True, reason=OPEN[p.stem])]
                         if p.stem in OPEN else []) for p in files]


@pytest.mark.parametrize("reduction", _cases())
def test_correct_code_gets_no_error(reduction: Path) -> None:
    found = analyze(reduction.read_text(encoding="utf-8"), path=str(reduction))
    errors = [(d.code, d.span.start.row, d.message) for d in found if d.severity is Severity.ERROR]
    assert errors == []


@pytest.mark.parametrize("name", ["r11_returned_list_name_collision", "r13_fixed_size_buffer_list"])
def test_lists_of_data_get_no_logging_warning_either(name: str) -> None:
    """A helper's list of results whose caller has a variable of the item's name (torchdiffeq), and
    a buffer filled in the first step only (apex): no GG010, no finding at all."""
    path = REDUCTIONS / f"{name}.py"
    assert [d.code for d in analyze(path.read_text(encoding="utf-8"), path=str(path))] == []


def test_every_reduction_is_here() -> None:
    assert len(_cases()) >= 29


def test_python36_async_name_is_one_file_error() -> None:
    """`.cuda(async=True)` (Python <= 3.6, PyTorch <= 0.3) is a syntax error since 3.7: one file error
    at the `async`, never a crash (DeepRL replay.py:205, knowledge-distillation evaluate.py:44)."""
    text = (REDUCTIONS / "file_error_async_as_a_name.py.txt").read_text(encoding="utf-8")
    result = check_source(text, "async_name.py", Settings(root=REDUCTIONS))
    assert result.diagnostics == ()
    assert [(e.message, e.row, e.column) for e in result.errors] == [("syntax error: invalid syntax", 9, 36)]
    # A file the prefilter skips (replay.py names no backward) gets the same verdict from CPython.
    assert syntax_error(Prepared("async_name.py", text, "utf-8")) == result.errors[0]
