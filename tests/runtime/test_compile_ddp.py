"""torch.compile and DistributedDataParallel (gloo, 2 processes), each in a fresh interpreter."""

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

COMPILE_PROGRAM = """
import json, sys
import torch
import torch.nn as nn
import gradguard

gradguard.install()  # before torch._dynamo is imported: the monitor must keep dynamo out lazily
assert "torch._dynamo" not in sys.modules
results = {}


class Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 6)

    def forward(self, x, h):
        return torch.tanh(self.lin(x) + h)


def compiled_model():
    cell = torch.compile(Cell())
    opt = torch.optim.SGD(cell.parameters(), lr=0.1)
    hidden = torch.zeros(2, 6)
    for _ in range(3):
        hidden = cell(torch.randn(2, 6), hidden)
        loss = hidden.pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


model = nn.Linear(4, 4)


@torch.compile(backend="eager")
def step(x, h):
    h = torch.tanh(model(x) + h)
    loss = h.pow(2).sum()
    loss.backward()
    return h


def compiled_step():
    h = torch.zeros(2, 4)
    for _ in range(3):
        h = step(torch.randn(2, 4), h)


from gradguard.runtime.monitor import current_state

for name, function in (("step", compiled_step), ("model", compiled_model)):
    try:
        function()
    except RuntimeError as exc:
        results[name] = current_state().diagnosis_for(exc).to_json()
print("RESULTS " + json.dumps(results))
"""


def _python(program: str, tmp_path: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(program), encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(REPO), **(env or {})),
        capture_output=True,
        text=True,
        timeout=420,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_torch_compile(tmp_path: Path) -> None:
    done = _python(COMPILE_PROGRAM, tmp_path, env={"TORCH_LOGS": "dynamo"})
    assert done.returncode == 0, done.stderr[-4000:]
    results = json.loads(done.stdout.split("RESULTS ", 1)[1])
    model = results["model"]
    assert model["node"] == "CompiledFunctionBackward"
    assert model["carrier"]["expression"] == "hidden" and model["carrier"]["scope"] == "compiled_model"
    assert model["fix"]["kind"] == "detach" and model["rule"] == "GG003"
    assert model["failing_call"]["function"] == "compiled_model"
    step = results["step"]
    assert step["carrier"]["expression"] == "h" and step["failing_call"]["function"] == "step"
    assert step["failing_call"]["call_index"] == 2 and step["freed_by"]["call_index"] == 1
    traced = done.stderr.split("attempted to trace the following frames", 1)[-1]
    assert "/gradguard/" not in traced


DDP_PROGRAM = """
import json, os, sys
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def worker(rank, world, store, out):
    import gradguard
    from gradguard.runtime.monitor import current_state

    gradguard.install()
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = DDP(nn.RNNCell(3, 5))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    hidden = torch.zeros(4, 5)
    result = {"rank": rank}
    try:
        for _ in range(3):
            hidden = model(torch.randn(4, 3), hidden)
            loss = hidden.pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    except RuntimeError as exc:
        result["report"] = current_state().diagnosis_for(exc).to_json()
        result["note"] = exc.__notes__[0]
    with open(os.path.join(out, f"rank{rank}.json"), "w") as handle:
        json.dump(result, handle)
    dist.destroy_process_group()


if __name__ == "__main__":
    out = sys.argv[1]
    mp.spawn(worker, args=(2, os.path.join(out, "store"), out), nprocs=2, join=True)
"""


def test_distributed_data_parallel_gloo(tmp_path: Path) -> None:
    script = tmp_path / "ddp.py"
    script.write_text(textwrap.dedent(DDP_PROGRAM), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path)],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        capture_output=True,
        text=True,
        timeout=420,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    for rank in (0, 1):
        result = json.loads((tmp_path / f"rank{rank}.json").read_text())
        report = result["report"]
        assert report["carrier"]["expression"] == "hidden" and report["fix"]["kind"] == "detach"
        assert report["failing_call"]["call_index"] == 2 and report["freed_by"]["call_index"] == 1
        assert f"On rank {rank} of 2" in report["explanation"]
        assert result["note"].startswith(f"gradguard (rank {rank} of 2): backward call #2 reused a graph")
