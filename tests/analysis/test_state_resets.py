"""State kept on layers and reset by a helper of another module (the snntorch / spikingjelly shape):
the model must run the reset on each layer the helper reaches, in order, and decide
`isinstance(m, LIF)` for the objects it knows, or a correct program gets a false GG003."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gradguard.analysis import analyze

LAYERS = """\
import torch
import torch.nn as nn


def spike(x, slope=5.0):
    hard = (x > 0).float()
    soft = torch.sigmoid(slope * x)
    return soft + (hard - soft).detach()


class LIF(nn.Module):
    def __init__(self, beta=0.85, threshold=1.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold
        self.mem = None

    def reset(self):
        self.mem = None

    def forward(self, x):
        if self.mem is None:
            self.mem = torch.zeros_like(x)
        self.mem = self.beta * self.mem + x
        s = spike(self.mem - self.threshold)
        self.mem = self.mem - s * self.threshold
        return s


def reset_states(net):
{reset}
"""

TRAIN = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

from snn.layers import LIF, reset_states


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.lif1 = nn.Linear(10, 24), LIF()
        self.fc2, self.lif2 = nn.Linear(24, 2), LIF()

    def forward(self, x):
        out = []
        for _ in range(4):
            out.append(self.lif2(self.fc2(self.lif1(self.fc1(x)))))
        return torch.stack(out).sum(0)


net = Net()
optimizer = torch.optim.Adam(net.parameters(), lr=5e-3)
x = torch.rand(96, 10)
y = (x[:, :5].sum(1) > x[:, 5:].sum(1)).long()
for epoch in range(2):
    for xb, yb in zip(x.split(16), y.split(16)):
{call}
        loss = F.cross_entropy(net(xb), yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""

RESETS = {
    "modules-isinstance": "    for m in net.modules():\n        if isinstance(m, LIF):\n            m.reset()",
    "list-display": "    for m in [net.lif1, net.lif2]:\n        m.reset()",
    "children-isinstance": "    for m in net.children():\n        if not isinstance(m, LIF):\n            continue\n        m.reset()",
}


def _lint(tmp_path: Path, reset: str, call: str) -> list[tuple[str, str]]:
    package = tmp_path / "snn"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "layers.py").write_text(LAYERS.format(reset=reset))
    script = tmp_path / "train.py"
    script.write_text(TRAIN.format(call=call))
    source = script.read_text()
    lines = source.splitlines()
    return [(d.code, lines[d.span.start.row - 1].strip()) for d in analyze(source, path=str(script))]


@pytest.mark.parametrize("reset", sorted(RESETS))
def test_a_reset_helper_of_another_module_clears_each_layers_state(tmp_path: Path, reset: str) -> None:
    assert _lint(tmp_path, textwrap.indent(RESETS[reset], ""), "        reset_states(net)") == []


def test_the_same_program_without_the_reset_is_found(tmp_path: Path) -> None:
    found = _lint(tmp_path, RESETS["modules-isinstance"], "        pass")
    assert ("GG003", "loss.backward()") in found
