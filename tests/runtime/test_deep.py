"""Opt-in deep mode: creation sites, exact attribution from held roots, and what it keeps alive."""

from __future__ import annotations

from typing import Any

import pytest
import scenarios
import torch
from scenarios import marked_line

from gradguard.runtime import monitor
from gradguard.runtime.diagnosis import FixKind

pytestmark = pytest.mark.torch


def test_held_roots_attribute_a_shared_tensor_exactly(diagnose: Any) -> None:
    _, d = diagnose(scenarios.shared_trunk_first_loss_gone, deep=True)
    assert d.freed_by.line == marked_line("shared-frees") and d.freed_by_exact
    assert d.failing_call.line == marked_line("shared-fails")
    assert d.carrier.expression == "features" and d.carrier.line == marked_line("shared-assigns")
    assert d.node == "ReluBackward0"
    assert d.fix.kind is FixKind.SUM_LOSSES


def test_default_mode_still_names_the_right_calls(diagnose: Any) -> None:
    _, d = diagnose(scenarios.shared_trunk_first_loss_gone)
    assert d.freed_by.line == marked_line("shared-frees") and not d.freed_by_exact
    assert d.failing_call.line == marked_line("shared-fails")
    assert d.fix.kind is FixKind.SUM_LOSSES


def test_creation_site_of_the_freed_node(diagnose: Any) -> None:
    exc, d = diagnose(scenarios.rnn_hidden_not_detached, deep=True)
    assert d.created_at == f"{scenarios.__file__}:{marked_line('rnn-assigns')} (output of RNN)"
    assert f"created at {scenarios.__file__}" in d.explanation
    assert "freed node    TanhBackward0, created at" in exc.__notes__[0]


def test_anomaly_mode_tracebacks_are_used_when_present(diagnose: Any) -> None:
    with torch.autograd.set_detect_anomaly(True, check_nan=False), pytest.warns(UserWarning):
        _, d = diagnose(scenarios.weight_outside_loop)
    assert d.created_at == f"{scenarios.__file__}:{marked_line('outside-assigns')} (from anomaly mode)"


def test_deep_mode_holds_a_bounded_window_and_cleans_up() -> None:
    hooks = torch.nn.modules.module._global_forward_hooks
    before = len(hooks)
    with monitor.monitor(deep=True):
        assert len(hooks) == before + 1
        for _ in range(3):
            scenarios.clean_loop(steps=3)
        state = monitor.current_state()
        held = state.deep.held()
        assert len(held) == 4
        assert [index for index, _ in held] == [6, 7, 8, 9]
    assert len(hooks) == before


def test_deep_mode_only_inside_its_block() -> None:
    monitor.install()
    try:
        with monitor.monitor(deep=True):
            assert monitor.current_state().deep is not None
        assert monitor.current_state().deep is None
    finally:
        monitor.uninstall()
