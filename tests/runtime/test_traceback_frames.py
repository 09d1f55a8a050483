"""What the monitor changes in a traceback (issue 12, item 11), exactly: a plain Python traceback gains one
frame (`gradguard/runtime/monitor.py`, in `_engine_run_backward`) and nothing else; pytest and IPython
hide that frame (`__tracebackhide__`), as they hide their own."""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
from pathlib import Path

import pytest
import torch

import gradguard

REPO = Path(__file__).resolve().parents[2]
MONITOR_FILE = str(REPO / "gradguard" / "runtime" / "monitor.py")


def _double_backward() -> None:
    w = torch.randn(3, requires_grad=True)
    loss = (w * 2).sum()
    loss.backward()
    loss.backward()


def _frames(monitored: bool) -> list[tuple[str, str]]:
    try:
        if monitored:
            with gradguard.monitor():
                _double_backward()
        else:
            _double_backward()
    except RuntimeError as exc:
        return [(frame.filename, frame.name) for frame in traceback.extract_tb(exc.__traceback__)]
    raise AssertionError("no error")


def test_a_plain_traceback_gains_exactly_one_hidden_frame() -> None:
    plain = _frames(monitored=False)
    monitored = _frames(monitored=True)
    added = [frame for frame in monitored if frame[0] == MONITOR_FILE]
    assert added == [(MONITOR_FILE, "_engine_run_backward")]
    assert [frame for frame in monitored if frame[0] != MONITOR_FILE] == plain


def test_the_frame_is_marked_hidden() -> None:
    with pytest.raises(RuntimeError) as raised:
        with gradguard.monitor():
            _double_backward()
    hidden = [
        frame.f_locals.get("__tracebackhide__")
        for frame, _ in traceback.walk_tb(raised.value.__traceback__)
        if frame.f_code.co_filename == MONITOR_FILE
    ]
    assert hidden == [True]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


def test_pytest_does_not_show_the_frame(tmp_path: Path) -> None:
    (tmp_path / "test_user.py").write_text(
        "import torch, gradguard\n\n"
        "def test_train():\n"
        "    gradguard.install()\n"
        "    try:\n"
        "        w = torch.randn(3, requires_grad=True)\n"
        "        loss = (w * 2).sum()\n"
        "        loss.backward()\n"
        "        loss.backward()\n"
        "    finally:\n"
        "        gradguard.uninstall()\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--tb=long", "test_user.py"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Trying to backward through the graph a second time" in done.stdout
    assert "torch/autograd/graph.py" in done.stdout, "pytest shows torch's frames around it"
    assert "gradguard/runtime/monitor.py" not in done.stdout


def test_ipython_does_not_show_the_frame() -> None:
    script = (
        "from IPython.testing.globalipapp import start_ipython\n"
        "ip = start_ipython()\n"
        "ip.run_cell('import torch, gradguard\\ngradguard.install()\\n"
        "w = torch.randn(3, requires_grad=True)\\nloss = (w * 2).sum()\\nloss.backward()')\n"
        "ip.run_cell('loss.backward()')\n"
    )
    pytest.importorskip("IPython")
    done = subprocess.run(
        [sys.executable, "-c", script], env=_env(), capture_output=True, text=True, timeout=180, check=False
    )
    output = done.stdout + done.stderr
    assert "Trying to backward through the graph a second time" in output
    assert "skipping hidden 1 frame" in output
    assert "gradguard/runtime/monitor.py" not in output
