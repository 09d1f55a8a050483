"""Deep mode under torch.compile (issue 12, item 9): it refuses compiled regions and says so, and the
numbers do not change by a single bit (20 training steps, inductor), in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [pytest.mark.torch, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]

PROGRAM = """
import json, sys, warnings
import torch
import gradguard


def train(steps=20):
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.LayerNorm(32), torch.nn.Linear(32, 1)
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    compiled = torch.compile(model)
    data, target = torch.randn(64, 16), torch.randn(64, 1)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((compiled(data) - target) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item().hex())
    return losses


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    gradguard.install(deep=True)  # first: the real case, dynamo has compiled nothing yet
    deep = train()
    stamping = gradguard.runtime.monitor.current_state().deep.stamping
    gradguard.uninstall()
    restored = torch.compile.__module__
    torch._dynamo.reset()
    plain = train()
print("RESULTS " + json.dumps({
    "deep": deep,
    "plain": plain,
    "stamping": stamping,
    "restored": restored,
    "warnings": [str(w.message) for w in caught],
}))
"""


def test_deep_mode_under_torch_compile_changes_no_number_and_says_what_it_refuses(tmp_path: Path) -> None:
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(PROGRAM), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        capture_output=True,
        text=True,
        timeout=420,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    results = json.loads(done.stdout.split("RESULTS ", 1)[1])
    assert results["deep"] == results["plain"]
    assert results["stamping"] is False
    assert results["restored"] == "torch", "uninstall gives torch.compile back"
    gradguard_warnings = [w for w in results["warnings"] if w.startswith("gradguard: deep mode")]
    assert len(gradguard_warnings) == 1
    assert not [w for w in results["warnings"] if "global hooks" in w], results["warnings"]
