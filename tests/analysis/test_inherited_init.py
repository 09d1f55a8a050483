"""`super().__init__(...)` runs the base class's `__init__` on the object (davidnabergoj/torchflows,
unseen5): a flow whose layers a base class stores (`self.layers = nn.ModuleList(layers)`), given by
the subclass through `super().__init__(make_layers(...))`, was an object without layers, and an
elementwise layer's tensor built once in its `__init__` (`Parameter(...) / 1000.0`, a graph made
once and freed by the first backward) was never reached. Written `super(RealNVP, self)` too, and
with the base class in another module. Each program runs under torch as the test says.
"""

from __future__ import annotations

from pathlib import Path

from fixture_support import error_lines, run_programs


LAYERS = '''"""Bijections of a small normalizing flow."""
import torch
from torch import nn


class Elementwise(nn.Module):
    def __init__(self, dim):
        super().__init__()
        VALUE

    def forward(self, x):
        return x * torch.exp(self.value[1]) + self.value[0], self.value[1].sum().expand(x.shape[0])


class Coupling(nn.Module):
    def __init__(self, dim, hidden=16):
        super().__init__()
        self.half = dim // 2
        self.net = nn.Sequential(nn.Linear(self.half, hidden), nn.Tanh(), nn.Linear(hidden, 2 * (dim - self.half)))

    def forward(self, x):
        a, b = x[:, : self.half], x[:, self.half :]
        shift, log_scale = self.net(a).chunk(2, dim=1)
        return torch.cat([a, b * torch.exp(log_scale) + shift], dim=1), log_scale.sum(dim=1)


class Composition(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = nn.ModuleList(layers)

    def forward(self, x):
        logdet = torch.zeros(x.shape[0])
        for layer in self.layers:
            x, ld = layer(x)
            logdet = logdet + ld
        return x, logdet
'''

FLOW = '''"""Fit a RealNVP-like flow by maximum likelihood."""
import math

import torch

from layers import Composition, Coupling, Elementwise


def make_layers(dim, n):
    layers = [Elementwise(dim)]
    for _ in range(n):
        layers.append(Coupling(dim))
    layers.append(Elementwise(dim))
    return layers


class RealNVP(Composition):
    def __init__(self, dim, n_layers=2):
        SUPER.__init__(make_layers(dim, n_layers))

    def log_prob(self, x):
        z, logdet = self(x)
        return -0.5 * (z ** 2).sum(dim=1) - 0.5 * z.shape[1] * math.log(2 * math.pi) + logdet


def fit(flow, data, epochs=2, batch_size=32):
    optimizer = torch.optim.AdamW(flow.parameters(), lr=0.05)
    for epoch in range(epochs):
        for batch in data.split(batch_size):
            optimizer.zero_grad()
            loss = -flow.log_prob(batch).mean()
            loss.backward()
            optimizer.step()
    print("ok")


torch.manual_seed(0)
fit(RealNVP(4), torch.randn(100, 4) * 2 + 4)
'''

BUILT_ONCE = "self.value = nn.Parameter(torch.randn(2, dim)) / 1000.0"
A_LEAF = "self.value = nn.Parameter(torch.randn(2, dim) / 1000.0)"


def _program(tmp_path: Path, name: str, value: str, proxy: str = "super()") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "layers.py").write_text(LAYERS.replace("VALUE", value), encoding="utf-8")
    (folder / "flow.py").write_text(FLOW.replace("SUPER", proxy), encoding="utf-8")
    return folder / "flow.py"


def test_a_base_class_init_run_through_super(tmp_path: Path) -> None:
    assert error_lines(_program(tmp_path, "once", BUILT_ONCE)) == [("GG006", "loss.backward()")]
    named = _program(tmp_path, "named", BUILT_ONCE, "super(RealNVP, self)")
    assert error_lines(named) == [("GG006", "loss.backward()")]
    assert error_lines(_program(tmp_path, "leaf", A_LEAF)) == []


def test_the_programs_behave_under_torch(tmp_path: Path) -> None:
    once, leaf = _program(tmp_path, "once", BUILT_ONCE), _program(tmp_path, "leaf", A_LEAF)
    ended = run_programs({once: [], leaf: []})
    assert "backward through the graph a second time" in (ended[once].error_message or "")
    assert ended[leaf].ok and ended[leaf].stdout.strip().endswith("ok"), ended[leaf].traceback
