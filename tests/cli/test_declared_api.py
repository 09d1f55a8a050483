"""`[tool.gradguard.api]`: what a project declares about its own helpers is what the analysis reads,
for functions and for methods of classes it cannot see, and the cache never serves a result computed
under other declarations."""

from __future__ import annotations

from cli_support import Project

TRAIN = """\
import torch
import torch.nn as nn
from helpers import repackage_hidden, make_noise
from engine import Engine

rnn = nn.RNN(4, 8)
opt = torch.optim.SGD(rnn.parameters(), lr=0.1)
hidden = torch.zeros(1, 2, 8)
for step in range(10):
    hidden = repackage_hidden(hidden)
    out, hidden = rnn(torch.randn(3, 2, 4) + make_noise(3, 2, 4), hidden)
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

engine = Engine(rnn, opt)
for step in range(3):
    out, _ = rnn(torch.randn(3, 2, 4))
    loss = out.mean()
    engine.step(loss)
    loss.backward()
"""
DECLARED = """\
[project]
name = "demo"

[tool.gradguard.api]
detaches = ["helpers.repackage_hidden"]
calls-backward = ["engine.Engine.step"]
fresh = ["helpers.make_noise"]
"""


def test_declared_helpers_are_what_the_analysis_reads(project: Project) -> None:
    project.write("train.py", TRAIN)
    # Unseen, `repackage_hidden` is taken to hand its argument's graph through, and `engine.step`
    # to do nothing with the loss.
    assert project.codes_by_file("--no-cache", "train.py") == {"train.py": [("GG003", 14)]}
    project.write("pyproject.toml", DECLARED)
    assert project.codes_by_file("--no-cache", "train.py") == {"train.py": [("GG001", 22)]}


def test_the_cache_follows_the_declarations(project: Project) -> None:
    project.write("train.py", TRAIN)
    assert project.codes_by_file("train.py") == {"train.py": [("GG003", 14)]}
    project.write("pyproject.toml", DECLARED)
    assert project.codes_by_file("train.py") == {"train.py": [("GG001", 22)]}
    project.write("pyproject.toml", DECLARED.replace('calls-backward = ["engine.Engine.step"]\n', ""))
    assert project.codes_by_file("train.py") == {}


def test_a_method_declared_to_keep_what_it_is_given_keeps_the_loss(project: Project) -> None:
    project.write("train.py", """\
import torch
import torch.nn as nn
from meters import Meter

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
meter = Meter()
for step in range(10):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    meter.push(loss)
""")
    assert project.codes_by_file("--no-cache", "train.py") == {}
    project.write("pyproject.toml", '[project]\nname = "demo"\n\n[tool.gradguard.api]\nkeeps-state = ["meters.Meter.push"]\n')
    assert project.codes_by_file("--no-cache", "train.py") == {"train.py": [("GG010", 13)]}
