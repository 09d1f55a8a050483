"""How the monitor behaves: exceptions untouched, lifetimes, install/uninstall, threads, fallback."""

from __future__ import annotations

import gc
import threading
import traceback
import weakref
from typing import Any

import pytest
import scenarios
import torch
from torch import nn

import gradguard
from gradguard.runtime import explain as explain_module
from gradguard.runtime import monitor
from gradguard.runtime.render import FAILED_PREFIX

pytestmark = pytest.mark.torch


def _user_frames(exc: BaseException) -> list[tuple[str, int, str]]:
    """The traceback's frames outside gradguard's own code."""
    return [
        (frame.filename, frame.lineno, frame.name)
        for frame in traceback.extract_tb(exc.__traceback__)
        if "/gradguard/runtime/" not in frame.filename
    ]


def _raise(function: Any) -> RuntimeError:
    try:
        function()
    except RuntimeError as exc:
        return exc
    raise AssertionError("no error")


@pytest.mark.parametrize(
    "scenario", [scenarios.rnn_hidden_not_detached, scenarios.gan_fake_not_detached, scenarios.inplace_after_save]
)
def test_exception_is_the_same_with_and_without_the_monitor(scenario: Any) -> None:
    plain = _raise(scenario)
    with monitor.monitor():
        watched = _raise(scenario)
    assert type(watched) is type(plain) is RuntimeError
    assert watched.args == plain.args
    assert str(watched) == str(plain)
    assert watched.__cause__ is None and watched.__context__ is None
    assert _user_frames(watched) == _user_frames(plain)
    assert not hasattr(plain, "__notes__")
    assert len(watched.__notes__) == 1 and watched.__notes__[0].startswith("gradguard")
    assert set(vars(watched)) == {"__notes__"}


def test_other_errors_pass_through_untouched() -> None:
    model = nn.Linear(3, 2)

    def shape_error() -> None:
        model(torch.randn(4, 5)).sum().backward()

    def no_grad_error() -> None:
        torch.randn(3).sum().backward()

    with monitor.monitor():
        for function in (shape_error, no_grad_error):
            exc = _raise(function)
            assert not hasattr(exc, "__notes__")
            assert set(vars(exc)) == set()


def test_a_failing_diagnosis_leaves_a_one_line_note(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any) -> None:
        raise ValueError("deliberately broken explainer")

    monkeypatch.setattr(explain_module, "explain", broken)
    plain = _raise(scenarios.same_loss_twice)
    with monitor.monitor():
        exc = _raise(scenarios.same_loss_twice)
    assert exc.args == plain.args
    assert exc.__notes__ == [f"{FAILED_PREFIX} (ValueError: deliberately broken explainer); the error above is unchanged."]


def test_user_code_catching_the_error_keeps_running() -> None:
    with monitor.monitor():
        for _ in range(2):
            try:
                scenarios.same_loss_twice()
            except RuntimeError as exc:
                assert "backward through the graph a second time" in str(exc)
        assert scenarios.clean_loop() > 0


def test_install_twice_then_uninstall_restores_torch_exactly() -> None:
    engine = torch.autograd._engine_run_backward
    graph_engine = torch.autograd.graph._engine_run_backward
    backward, grad = torch.autograd.backward, torch.autograd.grad
    gradguard.install()
    patched = torch.autograd._engine_run_backward
    gradguard.install()
    assert torch.autograd._engine_run_backward is patched is not engine
    assert torch.autograd.graph._engine_run_backward is patched
    assert torch.autograd.backward is backward and torch.autograd.grad is grad
    gradguard.uninstall()
    assert torch.autograd._engine_run_backward is engine
    assert torch.autograd.graph._engine_run_backward is graph_engine
    gradguard.uninstall()
    assert torch.autograd._engine_run_backward is engine
    assert not monitor.is_installed()


def test_nested_monitors_and_install_inside() -> None:
    engine = torch.autograd._engine_run_backward
    with gradguard.monitor():
        outer = monitor.current_state()
        with gradguard.monitor():
            assert monitor.current_state() is outer
        assert monitor.is_installed()
        gradguard.install()
        assert monitor.current_state() is outer
    assert monitor.is_installed()
    with gradguard.monitor():
        pass
    assert monitor.is_installed()
    gradguard.uninstall()
    assert torch.autograd._engine_run_backward is engine


def test_uninstall_inside_a_monitor_block_waits_for_the_block() -> None:
    with gradguard.monitor():
        gradguard.install()
        gradguard.uninstall()
        assert monitor.is_installed()
        exc = _raise(scenarios.same_loss_twice)
        assert exc.__notes__[0].startswith("gradguard")
    assert not monitor.is_installed()


def _activation_lifetime(retain: bool, deep: bool) -> bool:
    """Train one step with a large activation; True when it is freed once the step's names are gone."""
    model = nn.Sequential(nn.Linear(64, 512), nn.Tanh(), nn.Linear(512, 1))
    x = torch.randn(256, 64)
    hidden = model[1](model[0](x))
    ref = weakref.ref(hidden)
    loss = model[2](hidden).pow(2).mean()
    loss.backward(retain_graph=retain)
    del hidden, loss
    return ref() is None


@pytest.mark.parametrize("retain", [False, True])
def test_tensors_are_freed_as_without_the_monitor(retain: bool) -> None:
    gc.disable()
    try:
        assert _activation_lifetime(retain, deep=False)
        with monitor.monitor():
            assert _activation_lifetime(retain, deep=False)
            for _ in range(3):
                assert _activation_lifetime(retain, deep=False)
    finally:
        gc.enable()


def test_deep_mode_never_holds_a_retained_graph() -> None:
    gc.disable()
    try:
        with monitor.monitor(deep=True):
            assert _activation_lifetime(True, deep=True)
    finally:
        gc.enable()


def test_an_explained_exception_releases_its_graph() -> None:
    gc.disable()
    try:
        with monitor.monitor():
            model = nn.Linear(8, 8)
            x = torch.randn(4, 8)
            hidden = torch.tanh(model(x))
            ref = weakref.ref(hidden)
            loss = hidden.sum()
            loss.backward()
            try:
                loss.backward()
            except RuntimeError as exc:
                assert exc.__notes__
            del hidden, loss
            assert ref() is None
    finally:
        gc.enable()


def test_a_carried_distribution_is_released_after_its_explanation() -> None:
    # The carrier here is a torch.distributions object, which the monitor inspects in the frame that
    # is still running (to advise rebuilding it rather than detaching): that look must not keep it.
    gc.disable()
    try:
        with monitor.monitor():
            mu = torch.zeros(3, requires_grad=True)
            optimizer = torch.optim.SGD([mu], lr=0.1)
            q = torch.distributions.Normal(mu * 1.0, 1.0)
            locs: list[weakref.ref[torch.Tensor]] = []
            with pytest.raises(RuntimeError) as raised:
                for _ in range(3):
                    q = torch.distributions.Normal(q.loc * 0.9 + 0.1, 1.0)
                    locs.append(weakref.ref(q.loc))
                    loss = -q.log_prob(torch.ones(3)).sum()
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
            assert "`q` in test_a_carried_distribution" in raised.value.__notes__[0]
            del raised, q, loss
            assert [ref() is None for ref in locs] == [True, True]
    finally:
        gc.enable()


def test_backward_from_several_threads_at_once() -> None:
    errors: list[BaseException] = []
    notes: list[str] = []
    barrier = threading.Barrier(4)

    def worker(buggy: bool) -> None:
        try:
            barrier.wait()
            if buggy:
                try:
                    scenarios.rnn_hidden_not_detached()
                except RuntimeError as exc:
                    notes.append(exc.__notes__[0])
            else:
                for _ in range(5):
                    scenarios.clean_loop()
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    with monitor.monitor():
        threads = [threading.Thread(target=worker, args=(i % 2 == 0,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    assert not errors
    assert len(notes) == 2
    for note in notes:
        assert "`hidden` in rnn_hidden_not_detached()" in note


def test_install_and_uninstall_while_another_thread_trains() -> None:
    stop = threading.Event()
    failures: list[BaseException] = []

    def trainer() -> None:
        try:
            while not stop.is_set():
                scenarios.clean_loop(steps=2)
        except BaseException as exc:  # noqa: BLE001
            failures.append(exc)

    thread = threading.Thread(target=trainer)
    thread.start()
    try:
        for _ in range(20):
            gradguard.install()
            gradguard.uninstall()
    finally:
        stop.set()
        thread.join(timeout=60)
    assert not failures


def test_public_fallback_when_the_engine_function_is_missing() -> None:
    backward, grad = torch.autograd.backward, torch.autograd.grad
    engine = torch.autograd._engine_run_backward
    state = monitor._acquire(explicit=True, deep=False, target="public")
    try:
        assert torch.autograd._engine_run_backward is engine
        assert torch.autograd.backward is not backward
        exc = _raise(scenarios.rnn_hidden_not_detached)
        d = state.diagnosis_for(exc)
        assert d.carrier.expression == "hidden" and d.failing_call.call_index == 2
        exc = _raise(scenarios.grad_then_backward)
        assert state.diagnosis_for(exc).freed_by is None  # `grad` was imported before install
    finally:
        monitor._release(state, explicit=True)
    assert torch.autograd.backward is backward and torch.autograd.grad is grad


def test_call_records_hold_no_tensors() -> None:
    with monitor.monitor():
        scenarios.clean_loop()
        state = monitor.current_state()
        for record in state.log.snapshot():
            for value in vars(record).values():
                assert not isinstance(value, torch.Tensor)
        for raw in list(state.log._ring):
            assert all(isinstance(item, (int, bool, tuple, type(None))) or hasattr(item, "co_code") for item in raw)


def test_diagnosis_of_a_large_graph_is_fast() -> None:
    import time

    cell = nn.RNNCell(4, 4)
    hidden = torch.zeros(1, 4)
    with monitor.monitor():
        for step in range(2):
            for _ in range(1000):
                hidden = cell(torch.randn(1, 4), hidden)
            loss = hidden.sum()
            if step == 0:
                loss.backward()
                continue
            started = time.perf_counter()
            exc = _raise(loss.backward)
            elapsed = time.perf_counter() - started
    assert "`hidden`" in exc.__notes__[0]
    assert elapsed < 2.0
