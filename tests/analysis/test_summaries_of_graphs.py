"""Summaries of calls that return a graph (`analysis/summaries.py`), and the conditions a call's own
locals shadow.

A model's forward called at every pass and path of a training loop is analysed once per distinct
input: its summary replays how often each of its sites ran (the caller's nodes of those sites age as
the run aged them) and what it recorded by evaluation count (what the module call's node keeps), so a
step between the forward and its backward is still found through a summary. A call whose body binds
a local of the same name as a variable its caller tests (`step` in a logging helper, `i` in a
StyleGAN generator's forward) forgets the caller's conditions on that name only while it runs.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gradguard.analysis import analyze, summaries
from gradguard.analysis.state import State
from gradguard.analysis.summaries import Summaries, Summary
from gradguard.analysis.values import Value

_GAN = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim, activate=True):
        super().__init__()
        self.linear = nn.Linear(dim, dim)
        self.activate = activate

    def forward(self, x):
        out = self.linear(x)
        if self.activate:
            out = torch.relu(out)
        return out


class Generator(nn.Module):
    def __init__(self, dim, depth=3):
        super().__init__()
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
        self.out = Block(dim, activate=False)

    def forward(self, z):
        h = z
        for block in self.blocks:
            h = block(h)
        return torch.tanh(self.out(h))


class Discriminator(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.body = Block(dim)
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        return self.head(self.body(x))


def train(generator, discriminator, steps, dim=8):
    g_opt = torch.optim.Adam(generator.parameters(), lr=1e-3)
    d_opt = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
    for step in range(steps):
        real = torch.randn(16, dim)
        fake = generator(torch.randn(16, dim))
        d_loss = (torch.relu(1 - discriminator(real)) + torch.relu(1 + discriminator(FAKE))).mean()
        g_loss = -discriminator(fake).mean()
        d_opt.zero_grad()
        d_loss.backward(RETAIN)
        d_opt.step()
        g_opt.zero_grad()
        g_loss.backward()
        g_opt.step()
        if step % 50 == 0:
            sample = generator(torch.randn(4, dim))
            print(step, d_loss.item(), g_loss.item(), sample.mean().item())


if __name__ == "__main__":
    torch.manual_seed(0)
    train(Generator(8), Discriminator(8), 120)
'''

_GAN_BUGGY = _GAN.replace("FAKE", "fake").replace("RETAIN", "retain_graph=True")
_GAN_OK = _GAN.replace("FAKE", "fake.detach()").replace("RETAIN", "") \
    .replace("        g_loss = -discriminator(fake).mean()\n", "") \
    .replace("        d_opt.step()\n", "        d_opt.step()\n        g_loss = -discriminator(fake).mean()\n")

_LOGGED = '''
import torch
import torch.nn as nn


def log_metrics(history, every=10):
    # The average of the last losses; its own `step` counts them.
    step = 0
    total = 0.0
    for value in history[-every:]:
        total += value
        step += 1
    return total / max(step, 1)


class Regressor(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.body(x)


def train(model, optimizer, steps, dim=8, every=10):
    history = []
    for step in range(steps):
        x = torch.randn(4, dim)
        out = model(x)
        if step % every == 0:
            loss = out.pow(2).mean()
        average = log_metrics(history, every)
        if step % every == 0:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            history.append(loss.item())
            print(step, average)
    return history


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Regressor(8)
    train(model, torch.optim.SGD(model.parameters(), lr=0.1), 100)
'''

_RETUNED = _LOGGED.replace("every", "EVERY").replace(
    "def log_metrics(history, EVERY=10):",
    "EVERY = 10\n\n\ndef log_metrics(history, seen):\n    global EVERY\n    if seen >= 45:\n        EVERY = 5",
).replace("dim=8, EVERY=10):", "dim=8):").replace("log_metrics(history, EVERY)", "log_metrics(history, step)")


_SCALED = '''
import torch
import torch.nn as nn


class Scaled(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)
        self.register_buffer("scale", torch.ones(dim))

    def forward(self, x):
        return torch.relu(self.lin(x)) * self.scale


def train(net, optimizer, steps, dim=4):
    for step in range(steps):
        x = torch.randn(2, dim)
        outs = []
        for view in range(2):
            outs.append(net(x))
        first, second = outs[0], outs[1]
        net.scale.mul_(0.9)
        loss = (first - second).pow(2).sum() + second.sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    net = Scaled(4)
    train(net, torch.optim.SGD(net.parameters(), lr=0.1), 3)
    print("ok")
'''

def _codes(source: str) -> list[tuple[int, str]]:
    return [(d.span.start.row, d.code) for d in analyze(textwrap.dedent(source))]


def _line_of(source: str, text: str) -> int:
    return next(n for n, line in enumerate(source.splitlines(), 1) if text in line)


def _graph_replays(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """For each summary taken from here on: whether its result carries a graph."""
    replayed: list[bool] = []
    original = Summaries.replay

    def replay(summary: Summary, state: State, tables: summaries.ReplayTarget | None = None) -> Value:
        replayed.append(bool(summary.result.nodes))
        return original(summary, state, tables)

    monkeypatch.setattr(Summaries, "replay", staticmethod(replay))
    return replayed


def test_a_step_between_a_summarised_forward_and_its_backward_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    replayed = _graph_replays(monkeypatch)
    assert _codes(_GAN_BUGGY) == [(_line_of(_GAN_BUGGY, "g_loss.backward()"), "GG011")]
    assert any(replayed), "no forward returning a graph was taken from a summary"
    assert _codes(_GAN_OK) == []


def test_findings_through_summarised_forwards_are_those_of_running_them(monkeypatch: pytest.MonkeyPatch) -> None:
    with_summaries = [(d.span.start.row, d.code, d.message) for d in analyze(_GAN_BUGGY)]
    monkeypatch.setattr(summaries, "MAX_PER_SITE", 0)
    assert [(d.span.start.row, d.code, d.message) for d in analyze(_GAN_BUGGY)] == with_summaries


def test_a_write_in_place_after_summarised_forwards_is_found_in_their_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    # The forward is called twice from one site; the second call is taken from the first one's
    # summary. (The first call's node saved the buffer too, so this finding alone does not show that
    # the replayed facts are shifted right: the comparison without summaries below and over every
    # fixture in test_summaries.py is what checks that.)
    replayed = _graph_replays(monkeypatch)
    with_summaries = [(d.span.start.row, d.code, d.message) for d in analyze(_SCALED)]
    assert [(row, code) for row, code, _ in with_summaries] == [(_line_of(_SCALED, "loss.backward()"), "GG011")]
    assert any(replayed)
    monkeypatch.setattr(summaries, "MAX_PER_SITE", 0)
    assert [(d.span.start.row, d.code, d.message) for d in analyze(_SCALED)] == with_summaries


def test_a_helpers_own_local_does_not_make_the_callers_condition_forgotten() -> None:
    # `step` bound in `log_metrics` is not the loop's `step`: the second `if step % every == 0:` is
    # the first one's arm, and `loss` always exists where it is backward-ed.
    assert _codes(_LOGGED) == []


def test_a_helper_that_changes_what_the_condition_reads_still_makes_it_forgotten() -> None:
    # The helper halves the logging period once it has seen step 45: at step 45 the first test is
    # false, the second true, and step 40's loss is backward-ed a second time.
    assert _codes(_RETUNED) == [(_line_of(_RETUNED, "loss.backward()"), "GG001")]


def test_the_programs_behave_under_torch(tmp_path: Path) -> None:
    programs = {"gan_buggy.py": _GAN_BUGGY, "gan_ok.py": _GAN_OK, "logged.py": _LOGGED, "retuned.py": _RETUNED,
                "scaled.py": _SCALED}
    for name, source in programs.items():
        (tmp_path / name).write_text(source, encoding="utf-8")
    runner = textwrap.dedent("""
        import runpy, sys
        for name in sys.argv[1:]:
            try:
                runpy.run_path(name, run_name="__main__")
                print(name, "ran")
            except RuntimeError as error:
                print(name, "raised", "inplace" in str(error))
    """)
    done = subprocess.run([sys.executable, "-c", runner, *programs], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, check=True)
    outcome = [line for line in done.stdout.splitlines() if line.startswith(tuple(programs))]
    assert outcome == ["gan_buggy.py raised True", "gan_ok.py ran", "logged.py ran", "retuned.py raised False",
                       "scaled.py raised True"]
