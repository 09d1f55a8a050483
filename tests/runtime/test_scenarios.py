"""The diagnosis of each realistic scenario: lines, call numbers, carrier, node, fix and rule."""

from __future__ import annotations

from typing import Any

import pytest
import scenarios
from scenarios import marked_line

from gradguard.runtime.diagnosis import Cause, ErrorKind, FixKind

pytestmark = pytest.mark.torch


def check(
    diagnosis: Any,
    *,
    fails: str,
    frees: str | None,
    carrier: str,
    assigned: str | None,
    fix: FixKind,
    rule: str | None,
    node: str | None = None,
    failing_index: int = 2,
    freed_index: int = 1,
) -> None:
    assert diagnosis is not None
    assert diagnosis.error is ErrorKind.DOUBLE_BACKWARD
    assert diagnosis.failing_call.filename == scenarios.__file__
    assert diagnosis.failing_call.line == marked_line(fails)
    assert diagnosis.failing_call.call_index == failing_index
    if frees is not None:
        assert diagnosis.freed_by is not None
        assert diagnosis.freed_by.line == marked_line(frees)
        assert diagnosis.freed_by.call_index == freed_index
        assert diagnosis.freed_by.retain_graph is False
    assert diagnosis.carrier is not None and diagnosis.carrier.expression == carrier
    if assigned is not None:
        assert diagnosis.carrier.line == marked_line(assigned)
    assert diagnosis.fix.kind is fix
    assert diagnosis.rule == rule
    if node is not None:
        assert diagnosis.node == node


def test_rnn_hidden_not_detached(diagnose: Any) -> None:
    exc, d = diagnose(scenarios.rnn_hidden_not_detached)
    check(d, fails="rnn-fails", frees="rnn-fails", carrier="hidden", assigned="rnn-assigns", fix=FixKind.DETACH, rule="GG003", node="TanhBackward0")
    assert d.carrier.scope == "rnn_hidden_not_detached"
    assert d.fix.suggestion == "hidden = hidden.detach()"
    assert "retain_graph=True would be wrong here" in d.fix.retain_graph_note
    note = exc.__notes__[-1]
    assert note.startswith("gradguard: backward call #2 reused a graph that call #1 freed (TanhBackward0)")
    assert "gradguard rule GG003" in note


def test_lstm_tuple_state_is_named_as_the_tuple(diagnose: Any) -> None:
    _, d = diagnose(scenarios.lstm_tuple_state)
    check(d, fails="lstm-fails", frees="lstm-fails", carrier="state", assigned="lstm-assigns", fix=FixKind.DETACH, rule="GG003")
    assert d.fix.suggestion == "state = tuple(h.detach() for h in state)"


def test_state_kept_on_the_module(diagnose: Any) -> None:
    _, d = diagnose(scenarios.module_state)
    check(d, fails="h-fails", frees="h-fails", carrier="self.h", assigned="h-assigns", fix=FixKind.DETACH, rule="GG003", node="TanhBackward0")
    assert d.carrier.scope == "CharRNN"
    assert "model.h" in d.carrier.aliases
    assert d.fix.suggestion == "self.h = self.h.detach()"


def test_gan_fake_not_detached(diagnose: Any) -> None:
    _, d = diagnose(scenarios.gan_fake_not_detached)
    check(d, fails="gan-fails", frees="gan-frees", carrier="fake", assigned="gan-assigns", fix=FixKind.DETACH, rule="GG005", node="AddmmBackward0")
    assert d.freed_by_exact
    assert "disc(fake.detach())" in d.fix.suggestion
    assert d.cause is Cause.GAN_FAKE


def test_loss_accumulated_as_a_tensor(diagnose: Any) -> None:
    _, d = diagnose(scenarios.accumulated_loss)
    check(d, fails="acc-fails", frees="acc-fails", carrier="total_loss", assigned="acc-assigns", fix=FixKind.ITEM, rule="GG004", node="MseLossBackward0")
    assert d.fix.suggestion == "loss.backward()\ntotal_loss += loss.item()"


def test_two_heads_on_a_shared_trunk(diagnose: Any) -> None:
    _, d = diagnose(scenarios.two_heads, steps=1)
    check(d, fails="heads-fails", frees="heads-frees", carrier="features", assigned="heads-assigns", fix=FixKind.SUM_LOSSES, rule="GG002", node="ReluBackward0")
    assert d.fix.suggestion == "(cls_loss + reg_loss).backward()"
    assert "retain_graph=True on the first backward would also work" in d.fix.retain_graph_note


def test_tensor_built_outside_the_loop(diagnose: Any) -> None:
    _, d = diagnose(scenarios.weight_outside_loop)
    check(d, fails="outside-fails", frees="outside-fails", carrier="masked", assigned="outside-assigns", fix=FixKind.RECOMPUTE_IN_LOOP, rule="GG006", node="MulBackward0")
    assert d.fix.suggestion.startswith("masked = weight * mask")


def test_grad_imported_before_install_then_backward(diagnose: Any) -> None:
    _, d = diagnose(scenarios.grad_then_backward)
    check(d, fails="grad-fails", frees="grad-frees", carrier="score", assigned=None, fix=FixKind.CREATE_GRAPH, rule="GG007")
    assert d.freed_by.api == "torch.autograd.grad"
    assert d.fix.suggestion == "autograd_grad(score, x, create_graph=True)"


def test_same_loss_twice(diagnose: Any) -> None:
    _, d = diagnose(scenarios.same_loss_twice)
    check(d, fails="twice-fails", frees="twice-frees", carrier="loss", assigned="twice-assigns", fix=FixKind.OTHER, rule="GG001", node="PowBackward0")
    assert d.fix.suggestion == "loss.backward(retain_graph=True)"


def test_lbfgs_closure_returning_a_loss_built_outside(diagnose: Any) -> None:
    _, d = diagnose(scenarios.lbfgs_closure_outside)
    check(d, fails="lbfgs-fails", frees="lbfgs-fails", carrier="loss", assigned="lbfgs-assigns", fix=FixKind.RECOMPUTE_IN_LOOP, rule="GG001")
    assert d.carrier.scope == "lbfgs_closure_outside"


def test_grad_scaler(diagnose: Any) -> None:
    _, d = diagnose(scenarios.grad_scaler_rnn)
    check(d, fails="scaler-fails", frees="scaler-fails", carrier="h", assigned="scaler-assigns", fix=FixKind.DETACH, rule="GG003", node="TanhBackward0")


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpointed_rnn(diagnose: Any, reentrant: bool) -> None:
    _, d = diagnose(scenarios.checkpointed_rnn, reentrant)
    # Reentrant checkpointing runs a nested backward inside each outer one: calls 1-2 are step one.
    failing, freed = (3, 1) if reentrant else (2, 1)
    check(d, fails="ckpt-fails", frees="ckpt-fails", carrier="h", assigned="ckpt-assigns", fix=FixKind.DETACH, rule="GG003", failing_index=failing, freed_index=freed)


def test_inplace_modification(diagnose: Any) -> None:
    exc, d = diagnose(scenarios.inplace_after_save)
    assert d.error is ErrorKind.INPLACE_MODIFIED
    assert d.failing_call.line == marked_line("inplace-fails")
    assert d.node == "SigmoidBackward0"
    assert d.carrier.expression == "probs"
    assert d.carrier.line == marked_line("inplace-assigns")
    details = dict(d.details)
    assert details["version"] == "saved at version 0, now at version 1"
    assert details["modified at"] == f"{scenarios.__file__}:{marked_line('inplace')}: probs.mul_(2)"
    assert d.fix.kind is FixKind.OTHER and d.fix.suggestion == "probs = probs.mul(2)"
    assert d.freed_by is None and d.rule == "GG011"  # the rule that finds a saved tensor written in place
    assert exc.__notes__[-1].startswith("gradguard: a tensor `probs` that autograd saved for SigmoidBackward0")


def test_clean_loop_gets_nothing() -> None:
    from gradguard.runtime import monitor

    with monitor.monitor():
        scenarios.clean_loop()
        state = monitor.current_state()
        assert state is not None and state.last_diagnosis() is None
        assert len(state.log) == 3


@pytest.mark.parametrize(("one_optimizer", "fix"), [(False, FixKind.DETACH), (True, FixKind.RECOMPUTE_IN_LOOP)])
def test_a_value_only_the_optimizer_stepped_between_updates_is_read_detached(diagnose: Any, one_optimizer: bool,
                                                                            fix: FixKind) -> None:
    # The lint half decides the same from the dataflow (`Carrier.settled`): the critic's optimizer
    # stepped between the two backwards and no optimizer stepped after the policy's updates the
    # critic, so the policy loss reads the estimate detached; one optimizer of both steps after
    # the policy's backward too, and the forward must run again.
    _, d = diagnose(scenarios.td_actor_critic, one_optimizer=one_optimizer)
    check(d, fails="td-fails", frees="td-frees", carrier="estimate", assigned="td-assigns", fix=fix, rule="GG002")
    if fix is FixKind.DETACH:
        assert d.fix.suggestion == "estimate = estimate.detach()"
        assert d.fix.where.startswith("after the optimizer step, before the loss backward-ed at line")
