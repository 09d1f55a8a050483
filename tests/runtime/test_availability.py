"""Ways in without surprises: importing gradguard never imports torch; a missing or old torch is one line."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import types
import weakref
from pathlib import Path

import pytest
import torch
from torch import nn

import gradguard
from gradguard.runtime import monitor

pytestmark = pytest.mark.torch

REPO = Path(__file__).resolve().parents[2]


def test_importing_gradguard_and_its_runner_never_imports_torch() -> None:
    program = (
        "import sys, gradguard, gradguard.cli, gradguard.ipython, gradguard.runtime.runner, gradguard.runtime.monitor\n"
        "assert 'torch' not in sys.modules, sorted(m for m in sys.modules if m.startswith('torch'))\n"
        "import gradguard.auto\n"
        "import torch\n"
        "assert gradguard.runtime.monitor.is_installed()\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_missing_torch_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(monitor.MonitorUnavailable) as caught:
        gradguard.install()
    assert isinstance(caught.value, ImportError)
    message = str(caught.value)
    assert "\n" not in message and "torch>=2.0" in message and "not installed" in message
    gradguard.uninstall()


def test_old_torch_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    old = types.ModuleType("torch")
    old.__version__ = "1.13.1+cpu"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "torch", old)
    with pytest.raises(monitor.MonitorUnavailable, match=r"^gradguard: the runtime monitor needs torch>=2.0, found torch 1.13.1\+cpu"):
        gradguard.install()


def test_a_thousand_steps_keep_memory_flat() -> None:
    """Over 1,000 steps with the monitor (with and without retain_graph) nothing accumulates.

    The object count is taken once the 256-entry ring of call records is full; after that it must
    stay flat.
    """
    model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    refs: list[weakref.ref[torch.Tensor]] = []
    baseline = 0
    with gradguard.monitor():
        for step in range(1000):
            if step == 300:
                gc.collect()
                baseline = len(gc.get_objects())
            x = torch.randn(8, 16)
            hidden = model[1](model[0](x))
            loss = model[2](hidden).pow(2).mean()
            opt.zero_grad()
            loss.backward(retain_graph=step % 2 == 0)
            opt.step()
            if step % 100 == 0:
                refs.append(weakref.ref(hidden))
        del x, hidden, loss
        gc.collect()
        grown = len(gc.get_objects()) - baseline
        state = monitor.current_state()
        assert len(state.log) == 256
    assert all(ref() is None for ref in refs)
    assert grown < 50, grown
