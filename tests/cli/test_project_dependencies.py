"""A file's findings depend on the project modules it imports: the cache must know it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MODELS = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 4)
        self.hidden = None

    def forward(self, x):
        out, self.hidden = self.rnn(x, self.hidden)
        return out
"""

TRAIN = """\
import torch
from models import Net

model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    loss = model(torch.randn(5, 2, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def _lint(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gradguard", "lint", *args, "train.py"], cwd=folder,
                          capture_output=True, text=True, timeout=120)


def test_editing_an_imported_module_rechecks_the_script(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.gradguard]\n")
    (tmp_path / "models.py").write_text(MODELS)
    (tmp_path / "train.py").write_text(TRAIN)
    first = _lint(tmp_path)
    assert first.returncode == 1 and "train.py:9:5: GG003" in first.stdout, first.stdout + first.stderr
    assert _lint(tmp_path).stdout == first.stdout  # served warm
    detached = MODELS.replace("self.rnn(x, self.hidden)", "self.rnn(x, self.hidden)\n        self.hidden = self.hidden.detach()")
    (tmp_path / "models.py").write_text(detached)
    after = _lint(tmp_path)
    assert after.returncode == 0, after.stdout + after.stderr
    assert after.stdout == _lint(tmp_path, "--no-cache").stdout
