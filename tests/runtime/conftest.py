"""Runtime monitor tests: one pytest process shares one torch import; every test leaves torch unpatched."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).parent))

from gradguard.runtime import monitor as gg_monitor


@pytest.fixture(autouse=True)
def _restore_torch() -> Iterator[None]:
    """Fail a test that leaves the monitor installed, and restore torch for the next one."""
    engine = torch.autograd._engine_run_backward
    backward, grad = torch.autograd.backward, torch.autograd.grad
    yield
    leaked = gg_monitor.is_installed()
    while gg_monitor.is_installed():
        state = gg_monitor.current_state()
        assert state is not None
        gg_monitor._release(state, explicit=True)
        state.contexts = 0
        gg_monitor._release(state, explicit=False)
    assert torch.autograd._engine_run_backward is engine
    assert torch.autograd.backward is backward and torch.autograd.grad is grad
    assert not leaked, "the test left the monitor installed"


@pytest.fixture
def diagnose() -> object:
    """Run a callable under a fresh monitor; return (exception, diagnosis) for the error it raises."""

    def run(function: object, *args: object, deep: bool = False, **kwargs: object) -> tuple[BaseException, object]:
        gg_monitor.install(deep=deep)
        try:
            function(*args, **kwargs)  # type: ignore[operator]
        except RuntimeError as exc:
            state = gg_monitor.current_state()
            assert state is not None
            return exc, state.diagnosis_for(exc)
        finally:
            gg_monitor.uninstall()
        raise AssertionError("the scenario did not raise")

    return run
