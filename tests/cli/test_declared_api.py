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


VENDOR_TRAIN = """\
\"\"\"Fine-tune a GRU tagger with a training engine from an installed package (its source is not in the
project): `engine.train_step(loss)` runs zero_grad, backward and the optimizer step.\"\"\"

import torch
import torch.nn as nn
import torch.nn.functional as F
from trainkit.engine import Engine

VOCAB, TAGS, HIDDEN = 50, 5, 32


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.gru = nn.GRU(HIDDEN, HIDDEN, batch_first=True)
        self.head = nn.Linear(HIDDEN, TAGS)

    def forward(self, tokens, state):
        out, state = self.gru(self.embed(tokens), state)
        return self.head(out), state


model = Tagger()
engine = Engine(model, torch.optim.Adam(model.parameters(), lr=1e-3))
tokens = torch.randint(0, VOCAB, (4, 200))
tags = torch.randint(0, TAGS, (4, 200))
state = torch.zeros(1, 4, HIDDEN)
for start in range(0, 200, 20):
    logits, state = model(tokens[:, start:start + 20], state)
    loss = F.cross_entropy(logits.reshape(-1, TAGS), tags[:, start:start + 20].reshape(-1))
    engine.train_step(loss)
"""


def test_a_declared_helper_of_an_installed_package_is_the_files_only_backward(project: Project) -> None:
    """The file calls no backward of its own and the helper's source is nowhere in the project: the
    prefilter and the screen let it through on the declaration alone (cache included)."""
    project.write("train.py", VENDOR_TRAIN)
    assert project.codes_by_file("train.py") == {}
    project.write("pyproject.toml", '[project]\nname = "demo"\n\n[tool.gradguard.api]\n'
                                    'calls-backward = ["trainkit.engine.Engine.train_step"]\n')
    assert project.codes_by_file("train.py") == {"train.py": [("GG003", 32)]}
    assert project.codes_by_file("--no-cache", "train.py") == {"train.py": [("GG003", 32)]}
