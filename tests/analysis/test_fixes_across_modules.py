"""Fixes where the cause sits in another module of the project (issue 10): the helper whose
`torch.autograd.grad` frees the graph, the loop of a package that carries a recurrent state, the
model class that computes a tensor once in `__init__`. `gradguard lint --fix --unsafe-fixes` on the
project edits that module, and the fixed program trains exactly as the hand fix does (both run
under torch, each with its own version of the modules; each buggy program was seen to raise when
it was written, which the suite does not repeat to stay fast)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from fixture_support import run_source_many

from gradguard.cli import main

PROBES = {
    "probes.py": '''\
        """Diagnostics logged during training; nothing here is trained on."""
        import torch


        def input_sensitivity(outputs, inputs):
            """The mean norm of the outputs' gradient with respect to the inputs."""
            (grads,) = torch.autograd.grad(outputs.sum(), inputs)
            return grads.flatten(1).norm(dim=1).mean().item()
        ''',
    "train.py": '''\
        import torch
        import torch.nn as nn

        from probes import input_sensitivity

        LOG_EVERY = 4


        def train(model, batches, optimizer, criterion):
            for step, (xb, yb) in enumerate(batches):
                xb = xb.clone().requires_grad_(True)
                logits = model(xb)
                loss = criterion(logits, yb)
                if step % LOG_EVERY == 0:
                    print("step", step, "sensitivity", round(input_sensitivity(logits, xb), 4))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            return loss.item()


        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        batches = [(torch.randn(32, 8), torch.randint(0, 3, (32,))) for _ in range(12)]
        print("final", round(train(model, batches, optimizer, nn.CrossEntropyLoss()), 4))
        ''',
}
PROBES_HAND = {"probes.py": ("grad(outputs.sum(), inputs)", "grad(outputs.sum(), inputs, retain_graph=True)")}

PENALTY = {
    "robust/__init__.py": "",
    "robust/penalties.py": '''\
        import torch


        def input_gradient_penalty(loss, inputs):
            """The squared norm of the loss's gradient with respect to the inputs (double backprop)."""
            (grad_inputs,) = torch.autograd.grad(loss, inputs)
            return grad_inputs.pow(2).sum(dim=1).mean()
        ''',
    "train.py": '''\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        from robust.penalties import input_gradient_penalty

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(10, 32), nn.Softplus(), nn.Linear(32, 2))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        data = [(torch.randn(16, 10), torch.randint(0, 2, (16,))) for _ in range(6)]

        for epoch in range(3):
            for x, y in data:
                x = x.requires_grad_(True)
                loss = F.cross_entropy(model(x), y)
                total = loss + 0.1 * input_gradient_penalty(loss, x)
                optimizer.zero_grad()
                total.backward()
                optimizer.step()
            print(epoch, round(total.item(), 4))
        print("params", round(sum(p.sum().item() for p in model.parameters()), 4))
        ''',
}
PENALTY_HAND = {"robust/penalties.py": ("grad(loss, inputs)", "grad(loss, inputs, create_graph=True)")}

TRACKER = {
    "seqlib/__init__.py": "",
    "seqlib/model.py": '''\
        import torch
        import torch.nn as nn


        class Tracker(nn.Module):
            """A recurrent tracker: a GRU cell over measurements and a slow moving average of its state."""

            def __init__(self, n_in=4, n_hidden=16):
                super().__init__()
                self.cell = nn.GRUCell(n_in, n_hidden)
                self.head = nn.Linear(n_hidden, n_in)
                self.n_hidden = n_hidden

            def initial(self, batch):
                return torch.zeros(batch, self.n_hidden), torch.zeros(batch, self.n_hidden)

            def forward(self, x, state):
                h, m = state
                h = self.cell(x, h)
                m = 0.9 * m + 0.1 * h
                return self.head(h + m), (h, m)
        ''',
    "seqlib/loop.py": '''\
        import torch.nn.functional as F


        def run_chunks(model, chunks, optimizer):
            """Trains on consecutive chunks of one long sequence, carrying the state between them."""
            state = model.initial(chunks[0].size(1))
            total = 0.0
            for chunk in chunks:
                optimizer.zero_grad()
                loss = 0.0
                for t in range(chunk.size(0) - 1):
                    pred, last = model(chunk[t], state)
                    loss = loss + F.mse_loss(pred, chunk[t + 1])
                    state = last
                loss.backward()
                optimizer.step()
                total += loss.item()
            return total / len(chunks)
        ''',
    "train.py": '''\
        import torch

        from seqlib.loop import run_chunks
        from seqlib.model import Tracker

        torch.manual_seed(0)
        model = Tracker()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        series = torch.sin(torch.linspace(0, 20, 121)).unsqueeze(1).repeat(1, 4)
        series = series + 0.05 * torch.randn_like(series)
        chunks = [series[i:i + 20].unsqueeze(1).repeat(1, 3, 1) for i in range(0, 120, 20)]

        for epoch in range(3):
            print("epoch", epoch, round(run_chunks(model, chunks, optimizer), 4))
        ''',
}
# Cut where one chunk's graph ends, not at every step (that would backpropagate through one step only).
TRACKER_HAND = {"seqlib/loop.py": ("        loss = 0.0\n",
                                   "        loss = 0.0\n        state = tuple(s.detach() for s in state)\n")}

MIXER = {
    "nets.py": '''\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F


        class GatedMixer(nn.Module):
            """Mixes two views of the features with a learned, softmax-normalised gate."""

            def __init__(self, dim=12, n_out=3):
                super().__init__()
                self.gate_logits = nn.Parameter(torch.zeros(2))
                self.view_a = nn.Linear(dim, 16)
                self.view_b = nn.Linear(dim, 16)
                self.out = nn.Linear(16, n_out)
                self.gate = F.softmax(self.gate_logits, dim=0)

            def forward(self, x):
                mixed = self.gate[0] * torch.tanh(self.view_a(x)) + self.gate[1] * torch.tanh(self.view_b(x))
                return self.out(mixed)
        ''',
    "train.py": '''\
        import torch
        import torch.nn.functional as F

        from nets import GatedMixer


        def train(model, data, optimizer, epochs):
            for epoch in range(epochs):
                total = 0.0
                for x, y in data:
                    optimizer.zero_grad()
                    loss = F.cross_entropy(model(x), y)
                    loss.backward()
                    optimizer.step()
                    total += loss.item()
                print("epoch", epoch, round(total / len(data), 4))


        torch.manual_seed(0)
        model = GatedMixer()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        data = [(torch.randn(16, 12), torch.randint(0, 3, (16,))) for _ in range(8)]
        train(model, data, optimizer, 3)
        print("gate", [round(g, 4) for g in torch.softmax(model.gate_logits, 0).tolist()])
        ''',
}
MIXER_HAND = {"nets.py": [
    ("        self.gate = F.softmax(self.gate_logits, dim=0)\n", ""),
    ("    def forward(self, x):\n", "    def forward(self, x):\n        gate = F.softmax(self.gate_logits, dim=0)\n"),
    ("self.gate[0]", "gate[0]"), ("self.gate[1]", "gate[1]"),
]}

GRAD_NORM = {
    "metrics.py": '''\
        import torch


        def gradient_norm(loss, model):
            """The norm of the loss's gradient with respect to the model's parameters (for logging)."""
            model.zero_grad()
            loss.backward()
            norms = [p.grad.norm() for p in model.parameters() if p.grad is not None]
            return torch.stack(norms).norm().item()
        ''',
    "train.py": '''\
        import torch
        import torch.nn as nn

        from metrics import gradient_norm

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        for step in range(20):
            x, y = torch.randn(32, 8), torch.randn(32, 1)
            loss = nn.functional.mse_loss(model(x), y)
            if step % 5 == 0:
                print("grad norm", round(gradient_norm(loss, model), 4))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print("final", round(loss.item(), 4))
        ''',
}
GRAD_NORM_HAND = {"metrics.py": ("    loss.backward()", "    loss.backward(retain_graph=True)")}

CASES = {
    "grad-norm-helper": (GRAD_NORM, GRAD_NORM_HAND, "GG001"),
    "probe-helper": (PROBES, PROBES_HAND, "GG007"),
    "penalty-package": (PENALTY, PENALTY_HAND, "GG007"),
    "tracker-package": (TRACKER, TRACKER_HAND, "GG003"),
    "mixer-init": (MIXER, MIXER_HAND, "GG006"),
}


def _files(case: dict[str, str]) -> dict[str, str]:
    return {name: textwrap.dedent(text) for name, text in case.items()}


def _hand(files: dict[str, str], edits: dict[str, object]) -> dict[str, str]:
    out = dict(files)
    for name, change in edits.items():
        for old, new in change if isinstance(change, list) else [change]:  # type: ignore[misc]
            assert old in out[name], (name, old)
            out[name] = out[name].replace(old, new)
    return out


def program(files: dict[str, str]) -> str:
    """One script that installs the project's modules from their texts, then runs `train.py`: each
    run in the shared interpreter brings its own version of the modules."""
    lines = ["import sys, types",
             "for _name in [n for n in sys.modules if n.split('.')[0] in %r]:" % sorted(
                 {name.split("/")[0].removesuffix(".py") for name in files if name != "train.py"}),
             "    del sys.modules[_name]"]
    for name in sorted(files, key=lambda n: (n.count("/"), not n.endswith("__init__.py"))):
        if name == "train.py":
            continue
        dotted = name.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        lines.append(f"_m = types.ModuleType({dotted!r})")
        if name.endswith("__init__.py"):
            lines.append("_m.__path__ = []")
        lines.append(f"sys.modules[{dotted!r}] = _m")
        if "." in dotted:
            parent, _, leaf = dotted.rpartition(".")
            lines.append(f"setattr(sys.modules[{parent!r}], {leaf!r}, _m)")
        lines.append(f"exec(compile({files[name]!r}, {name!r}, 'exec'), _m.__dict__)")
    return "\n".join(lines) + "\n" + files["train.py"]


def _fix(root: Path, files: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> tuple[str, dict[str, str]]:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\n', encoding="utf-8")
    monkeypatch.chdir(root)
    before = CliRunner().invoke(main, ["lint", "train.py", "--no-cache", "--output-format", "concise"])
    CliRunner().invoke(main, ["lint", "train.py", "--no-cache", "--fix", "--unsafe-fixes"])
    return before.output, {name: (root / name).read_text(encoding="utf-8") for name in files}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    found: dict[str, object] = {}
    sources: dict[str, str] = {}
    with pytest.MonkeyPatch.context() as monkeypatch:
        for case, (texts, hand, _) in CASES.items():
            files = _files(texts)
            before, fixed = _fix(tmp_path_factory.mktemp(case), files, monkeypatch)
            found[case] = (before, files, fixed)
            sources[f"{case}_fixed.py"] = program(fixed)
            sources[f"{case}_hand.py"] = program(_hand(files, hand))  # type: ignore[arg-type]
    found["runs"] = run_source_many(sources)
    return found


@pytest.mark.parametrize("case", CASES)
def test_the_fix_edits_the_module_where_the_cause_sits_and_trains_as_the_hand_fix(
        outcomes: dict[str, object], case: str) -> None:
    before, files, fixed = outcomes[case]  # type: ignore[misc]
    code = CASES[case][2]
    assert "train.py:" in before and code in before, before
    assert fixed["train.py"] == files["train.py"]  # the cause is elsewhere: the script stays as it was
    assert fixed != files
    runs = outcomes["runs"]
    assert runs[f"{case}_fixed.py"].error_type is None, runs[f"{case}_fixed.py"].stderr  # type: ignore[index]
    assert runs[f"{case}_fixed.py"].stdout == runs[f"{case}_hand.py"].stdout  # type: ignore[index]


def test_a_second_fix_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, fixed = _fix(tmp_path, _files(TRACKER), monkeypatch)
    again = CliRunner().invoke(main, ["lint", ".", "--no-cache", "--fix", "--unsafe-fixes"])
    assert again.exit_code == 0, again.output
    assert {name: (tmp_path / name).read_text(encoding="utf-8") for name in fixed} == fixed


TRAINKIT = {
    "trainkit/__init__.py": "from .loop import Loop\nfrom .task import Task\n",
    "trainkit/task.py": '''\
        class Task:
            """What the loop trains: `step` returns the loss the loop backward()s and optimises."""

            def step(self, batch):
                raise NotImplementedError

            def backward(self, loss):
                loss.backward()
        ''',
    "trainkit/loop.py": '''\
        class Loop:
            def __init__(self, epochs=1):
                self.epochs = epochs

            def run(self, task, model, optimizer, batches):
                for epoch in range(self.epochs):
                    for batch in batches:
                        loss = task.step(batch)
                        optimizer.zero_grad()
                        loss.backward()
                        optimizer.step()
                return model
        ''',
    "train.py": '''\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        from trainkit import Loop, Task


        class Regression(Task):
            def __init__(self, model):
                self.model = model

            def step(self, batch):
                x, y = batch
                loss = F.mse_loss(self.model(x).squeeze(-1), y)
                self.backward(loss)
                return loss


        model = nn.Linear(4, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        batches = [(torch.randn(8, 4), torch.randn(8)) for _ in range(3)]
        Loop().run(Regression(model), model, optimizer, batches)
        ''',
}


def test_a_framework_s_backward_met_by_the_user_s_own_is_never_fixed_in_the_framework(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The user's `self.backward(loss)` frees the graph the loop's backward needs: the cause is the
    # user's call, not the loop's correct code, which other tasks rely on.
    files = _files(TRAINKIT)
    before, fixed = _fix(tmp_path, files, monkeypatch)
    assert "GG001" in before
    assert fixed["trainkit/loop.py"] == files["trainkit/loop.py"]
    assert fixed["trainkit/task.py"] == files["trainkit/task.py"]
