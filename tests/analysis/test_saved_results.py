"""A node that keeps its own output for its backward (`relu`, `sigmoid`, `softmax`, `exp`: torch's
`_saved_result`, generated into the facts as `saves-result`) fails that backward once the output is
written in place: `out = self.relu(h); out += x` (a residual added after the activation),
`gate = torch.sigmoid(z); gate[:, 0] = 0`; an activation built or called with `inplace=True` writes
its input (`nn.ReLU(inplace=True)` after a product that kept it); and views of one tensor share its version (`z1, z2 =
z[:, :c], z[:, c:]`: a write into `z2` changes what a node kept of `z1`). Five of seven real bugs
a blind search found (unseen5: NNR, CS-Net, H3DNet, Glow, MAE-DFER) were this error; gradguard
found none of them before.

What keeps its output is torch's answer, for the form of the call it was probed with: `x.pow(2)`
(a scalar exponent keeps its input only) and `torch.max(x, dim=1)` (values and indices) do not.
Each program runs under torch as the test says.
"""

from __future__ import annotations

from pathlib import Path

from fixture_support import run_programs

from gradguard.analysis import analyze
from gradguard.analysis.api import keeps_its_result

BLOCKS = '''"""Residual blocks for a small image classifier."""
import torch
from torch import nn
import torch.nn.functional as F


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        RESIDUAL
        return out


class GatedHead(nn.Module):
    def __init__(self, channels, classes):
        super().__init__()
        self.gate = nn.Linear(channels, channels)
        self.out = nn.Linear(channels, classes)

    def forward(self, features):
        gate = torch.sigmoid(self.gate(features))
        GATE
        return self.out(features * gate)


class Net(nn.Module):
    def __init__(self, channels=8, classes=4):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.blocks = nn.Sequential(ResidualBlock(channels), ResidualBlock(channels))
        self.head = GatedHead(channels, classes)

    def forward(self, images):
        features = self.blocks(F.relu(self.stem(images))).mean(dim=(2, 3))
        return self.head(features)
'''

TRAIN = '''"""Train the classifier on random images."""
import torch
import torch.nn.functional as F

from blocks import Net


def train(model, optimizer, steps):
    for step in range(steps):
        images, labels = torch.randn(4, 3, 8, 8), torch.randint(0, 4, (4,))
        loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print("ok")


model = Net()
train(model, torch.optim.SGD(model.parameters(), lr=0.1), 3)
'''

# The model's module named on the command line (default `blocks`), imported by that name
# (zaiweizhang/H3DNet's train.py, unseen5).
TRAIN_BY_NAME = TRAIN.replace("from blocks import Net\n", """import argparse
import importlib

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="blocks", help="the module of the network")
FLAGS = parser.parse_args([])
Net = importlib.import_module(FLAGS.model).Net
""")

# torchvision's order: the residual added in place to the normalised output, then the activation.
CLEAN = {"RESIDUAL": "out += identity\n        out = self.relu(out)", "GATE": "gate = gate * (gate > 0.1)"}
# The activation first, then the residual added in place to the tensor ReLU kept.
AFTER_RELU = {**CLEAN, "RESIDUAL": "out = self.relu(out)\n        out += identity"}
# The gate's first unit switched off in place: the tensor sigmoid kept.
GATE_WRITTEN = {**CLEAN, "GATE": "gate[:, 0] = 0"}

ONE_FILE = '''import torch
import torch.nn.functional as F

torch.manual_seed(0)
weight = torch.randn(8, 8, requires_grad=True)
optimizer = torch.optim.SGD([weight], lr=0.1)
for step in range(3):
    x = torch.randn(4, 8)
    scores = x @ weight
    BODY
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("ok")
'''
# Other overloads, out-of-place forms, writes under no_grad: nothing kept is written.
ONE_FILE_CLEAN = ONE_FILE.replace("BODY", """best, index = torch.max(scores, dim=1)
    best += 1
    squares = scores.pow(2)
    squares += 1
    probs = F.softmax(scores, dim=1)
    probs = probs * (probs > 0.01)
    with torch.no_grad():
        kept = torch.exp(scores)
        kept[:, 0] = 0
    loss = best.sum() + squares.mean() + probs.sum() + kept.sum()""")
ONE_FILE_SOFTMAX = ONE_FILE.replace("BODY", """probs = F.softmax(scores, dim=1)
    probs[:, 0] = 0
    loss = probs.sum()""")
ONE_FILE_EXP = ONE_FILE.replace("BODY", """weights = scores.exp()
    weights /= weights.sum(dim=1, keepdim=True)
    loss = (weights * x).sum()""")


# Views of one tensor share its version: an affine coupling updating one half in place changes the
# other half, which the coupling network's first convolution kept (chaiyujin/glow-pytorch's bug).
FLOWS = '''"""An affine coupling flow (the shape of Glow's FlowStep)."""
import torch
from torch import nn


def split_feature(tensor, kind="split"):
    c = tensor.size(1)
    if kind == "split":
        return tensor[:, : c // 2, ...], tensor[:, c // 2 :, ...]
    return tensor[:, 0::2, ...], tensor[:, 1::2, ...]


class Coupling(nn.Module):
    def __init__(self, channels=4, hidden=16):
        super().__init__()
        self.mix = nn.Conv2d(channels, channels, 1, bias=False)
        self.net = nn.Sequential(nn.Conv2d(channels // 2, hidden, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(hidden, channels, 3, padding=1))

    def forward(self, z):
        z = self.mix(z)
        z1, z2 = split_feature(z, "split")
        shift, scale = split_feature(self.net(z1), "cross")
        scale = torch.sigmoid(scale + 2.0)
        UPDATE
        logdet = torch.log(scale).sum(dim=(1, 2, 3))
        return torch.cat((z1, z2), dim=1), logdet
'''

FLOW_TRAIN = '''"""Maximum likelihood on random images, through a trainer built from a dict of parts."""
import torch

from flows import Coupling


class Trainer:
    def __init__(self, graph, optim):
        self.graph = graph
        self.optim = optim

    def train(self, batches=3):
        for _ in range(batches):
            z, logdet = self.graph(torch.randn(4, 4, 8, 8))
            loss = (0.5 * (z ** 2).sum(dim=(1, 2, 3)) - logdet).mean()
            self.optim.zero_grad()
            loss.backward()
            self.optim.step()
        print("ok")


def build():
    graph = Coupling()
    return {"graph": graph, "optim": torch.optim.Adam(graph.parameters(), lr=1e-3)}


Trainer(**build()).train()
'''
FLOW_IN_PLACE = "z2 += shift\n        z2 *= scale"
FLOW_OUT_OF_PLACE = "z2 = (z2 + shift) * scale"


def _flow(tmp_path: Path, name: str, update: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "flows.py").write_text(FLOWS.replace("UPDATE", update), encoding="utf-8")
    (folder / "train.py").write_text(FLOW_TRAIN, encoding="utf-8")
    return folder / "train.py"


# An activation built with `inplace=True` writes its input: here a tensor a product kept for its
# backward (the Xception/FUNIT family of bugs), and, in the clean twin, torchvision's block (the ReLU
# writes what a BatchNorm returned, which nothing kept) with dropout and a functional leaky ReLU in place.
IN_PLACE_ACTIVATIONS = '''import torch
from torch import nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.gate = nn.Linear(8, 8)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        h = self.fc(x)
        weighted = h * torch.sigmoid(self.gate(x))
        h = self.act(h)
        return weighted + h


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(4)
        self.drop = nn.Dropout(0.1, inplace=True)
        self.head = nn.Linear(4, 8)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        out = self.relu(out)
        feats = self.drop(self.head(out.mean(dim=(2, 3))))
        return F.leaky_relu(feats, 0.2, inplace=True)


model = MODEL()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(2, 4, 8, 8) if isinstance(model, Block) else torch.randn(4, 8)
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("ok")
'''


def _program(tmp_path: Path, name: str, blocks: dict[str, str]) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    text = BLOCKS
    for marker, code in blocks.items():
        text = text.replace(marker, code)
    (folder / "blocks.py").write_text(text, encoding="utf-8")
    (folder / "train.py").write_text(TRAIN, encoding="utf-8")
    return folder / "train.py"


def _errors(source: str, path: Path | None = None) -> list[tuple[str, str]]:
    lines = source.splitlines()
    found = analyze(source, path=str(path) if path is not None else None)
    return [(d.code, lines[d.span.start.row - 1].strip()) for d in found if d.severity.name == "ERROR"]


def test_a_residual_added_in_place_after_the_activation_in_another_module(tmp_path: Path) -> None:
    for name, blocks, expected in (("clean", CLEAN, []), ("after-relu", AFTER_RELU, [("GG011", "loss.backward()")]),
                                   ("gate", GATE_WRITTEN, [("GG011", "loss.backward()")])):
        script = _program(tmp_path, name, blocks)
        assert _errors(script.read_text(encoding="utf-8"), script) == expected, name
    script = tmp_path / "after-relu" / "train.py"
    message = analyze(script.read_text(encoding="utf-8"), path=str(script))[0].message
    assert "blocks.py:21" in message and "`out`" in message  # the write, where it is


def test_a_module_imported_by_the_name_an_option_defaults_to(tmp_path: Path) -> None:
    for name, blocks, expected in (("by-name-clean", CLEAN, []),
                                   ("by-name-after-relu", AFTER_RELU, [("GG011", "loss.backward()")])):
        script = _program(tmp_path, name, blocks)
        script.write_text(TRAIN_BY_NAME, encoding="utf-8")
        assert _errors(TRAIN_BY_NAME, script) == expected, name


def test_an_activation_built_to_write_its_input() -> None:
    assert _errors(IN_PLACE_ACTIVATIONS.replace("MODEL()", "Attention()")) == [("GG011", "loss.backward()")]
    assert _errors(IN_PLACE_ACTIVATIONS.replace("MODEL()", "Block()")) == []


def test_views_of_one_tensor_share_its_version(tmp_path: Path) -> None:
    script = _flow(tmp_path, "in-place", FLOW_IN_PLACE)
    assert _errors(script.read_text(encoding="utf-8"), script) == [("GG011", "loss.backward()")]
    message = analyze(script.read_text(encoding="utf-8"), path=str(script))[0].message
    assert "flows.py:25" in message and "`z2`" in message
    script = _flow(tmp_path, "out-of-place", FLOW_OUT_OF_PLACE)
    assert _errors(script.read_text(encoding="utf-8"), script) == []


def test_what_keeps_its_output_is_torchs_answer_for_the_form_called() -> None:
    assert _errors(ONE_FILE_CLEAN) == []
    assert _errors(ONE_FILE_SOFTMAX) == [("GG011", "loss.backward()")]
    assert _errors(ONE_FILE_EXP) == [("GG011", "loss.backward()")]


def test_the_facts_of_kept_outputs() -> None:
    # (the receiver first for a method; True marks a literal number)
    assert keeps_its_result("torch.Tensor.sigmoid", [False])
    assert keeps_its_result("torch.nn.functional.softmax", [False, False])  # with `dim=`
    assert not keeps_its_result("torch.max", [False, False])  # values and indices
    assert not keeps_its_result("torch.Tensor.pow", [False, True])  # `x.pow(2)` keeps `x` only
    assert keeps_its_result("torch.Tensor.pow", [False, False])  # a tensor exponent keeps the result
    assert not keeps_its_result("torch.nn.functional.gelu", [False])  # keeps its input
    assert not keeps_its_result("torch.relu", [False, False, False])


def test_the_programs_behave_under_torch(tmp_path: Path) -> None:
    expected: dict[Path, bool] = {}
    for name, blocks, fails in (("clean", CLEAN, False), ("after-relu", AFTER_RELU, True),
                                ("gate", GATE_WRITTEN, True)):
        expected[_program(tmp_path, name, blocks)] = fails
    for name, blocks, fails in (("by-name-after-relu", AFTER_RELU, True),):
        script = _program(tmp_path, name, blocks)
        script.write_text(TRAIN_BY_NAME, encoding="utf-8")
        expected[script] = fails
    for name, update, fails in (("flow-in-place", FLOW_IN_PLACE, True),
                                ("flow-out-of-place", FLOW_OUT_OF_PLACE, False)):
        expected[_flow(tmp_path, name, update)] = fails
    for name, source, fails in (("one-clean", ONE_FILE_CLEAN, False), ("one-softmax", ONE_FILE_SOFTMAX, True),
                                ("one-exp", ONE_FILE_EXP, True),
                                ("attention", IN_PLACE_ACTIVATIONS.replace("MODEL()", "Attention()"), True),
                                ("block", IN_PLACE_ACTIVATIONS.replace("MODEL()", "Block()"), False)):
        (tmp_path / name).mkdir()
        script = tmp_path / name / "train.py"
        script.write_text(source, encoding="utf-8")
        expected[script] = fails
    ended = run_programs({script: [] for script in expected})
    for script, fails in expected.items():
        outcome = ended[script]
        if fails:
            assert "modified by an inplace operation" in (outcome.error_message or ""), script
        else:
            assert outcome.ok and outcome.stdout.strip().endswith("ok"), (script, outcome.traceback)
