"""The runtime reads the project's `[tool.gradguard.api]` as the lint does: a helper declared as
calling backward is not where the user's call is, and a declared detaching helper is what the fix
calls. Each program is a small project (a trainer module, a helpers module, the script) written
to a fresh folder and run as `gradguard run` runs it, with `sys.argv[0]` the script."""

from __future__ import annotations

import runpy
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gradguard.runtime.diagnosis import FixKind
from gradguard.runtime.project import ProjectAPI, load

pytestmark = pytest.mark.torch

ENGINE = '''"""A small trainer: the step a training loop calls once per batch."""
import torch


class Engine:
    def __init__(self, model, lr=0.01):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        self.steps = 0

    def step(self, loss):
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.steps += 1
        return loss.item()
'''

HELPERS = '''"""Helpers of the project."""
import torch


def repackage_hidden(h):
    """Wraps hidden states in new tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)
'''

RNN_WITH_ENGINE = '''"""A character RNN trained through the project's Engine; the hidden state is carried across
batches without being detached."""
import torch
import torch.nn as nn

from {engine} import Engine


class CharRNN(nn.Module):
    def __init__(self, vocab=12, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.rnn = nn.RNN(hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, h):
        out, h = self.rnn(self.embed(x), h)
        return self.head(out), h


def batches(n, vocab=12):
    g = torch.Generator().manual_seed(0)
    for _ in range(n):
        x = torch.randint(0, vocab, (4, 8), generator=g)
        yield x, torch.roll(x, 1, dims=1)


def main():
    model = CharRNN()
    engine = Engine(model)
    criterion = nn.CrossEntropyLoss()
    hidden = torch.zeros(1, 4, 16)
    for x, y in batches(3):
        logits, hidden = model(x, hidden)
        loss = criterion(logits.reshape(-1, 12), y.reshape(-1))
        engine.step(loss)  # step


main()
'''

LSTM_STATE = '''"""A word-level LSTM language model whose (h, c) state is carried across batches; the project
has a helper to detach it, which this loop forgets to call."""
import torch
import torch.nn as nn

{import_line}


class WordLM(nn.Module):
    def __init__(self, vocab=20, size=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, size)
        self.lstm = nn.LSTM(size, size, batch_first=True)
        self.decoder = nn.Linear(size, vocab)

    def forward(self, tokens, state):
        out, state = self.lstm(self.embed(tokens), state)
        return self.decoder(out), state


def train(model, steps=3, vocab=20):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    state = (torch.zeros(1, 2, 16), torch.zeros(1, 2, 16))
    g = torch.Generator().manual_seed(1)
    for _ in range(steps):
        tokens = torch.randint(0, vocab, (2, 6), generator=g)
        logits, state = model(tokens, state)
        loss = criterion(logits.reshape(-1, vocab), tokens.reshape(-1))
        optimizer.zero_grad()
        loss.backward()  # lstm-fails
        optimizer.step()


train(WordLM())
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A folder of the project with unique module names, the script as `sys.argv[0]`."""
    tag = uuid.uuid4().hex[:8]
    names = {"engine": f"trainer_{tag}", "helpers": f"helpers_{tag}"}
    (tmp_path / f"{names['engine']}.py").write_text(ENGINE, encoding="utf-8")
    (tmp_path / f"{names['helpers']}.py").write_text(HELPERS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "argv", [str(tmp_path / "train.py")])
    yield {"root": tmp_path, **names}
    for name in names.values():
        sys.modules.pop(name, None)


def _script(project: dict[str, Any], text: str) -> Path:
    path = Path(project["root"]) / "train.py"
    path.write_text(text, encoding="utf-8")
    return path


def _line(path: Path, mark: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if line.endswith(f"# {mark}"))


def _config(project: dict[str, Any], body: str) -> None:
    (Path(project["root"]) / "pyproject.toml").write_text(f"[tool.gradguard.api]\n{body}", encoding="utf-8")


def test_a_declared_backward_helper_is_not_the_call_site(diagnose: Any, project: dict[str, Any]) -> None:
    _config(project, f"calls-backward = ['{project['engine']}.Engine.step']\n")
    script = _script(project, RNN_WITH_ENGINE.format(engine=project["engine"]))
    _, d = diagnose(runpy.run_path, str(script), run_name="__main__")
    assert d is not None and d.failing_call is not None
    assert (d.failing_call.filename, d.failing_call.line) == (str(script), _line(script, "step"))
    assert d.freed_by is not None and d.freed_by.line == _line(script, "step")
    assert d.carrier is not None and d.carrier.expression == "hidden"
    assert d.fix.kind is FixKind.DETACH and d.fix.suggestion == "hidden = hidden.detach()"


def test_without_the_declaration_the_call_site_is_inside_the_helper(diagnose: Any, project: dict[str, Any]) -> None:
    script = _script(project, RNN_WITH_ENGINE.format(engine=project["engine"]))
    _, d = diagnose(runpy.run_path, str(script), run_name="__main__")
    assert d is not None and d.failing_call is not None
    assert d.failing_call.filename == str(Path(project["root"]) / f"{project['engine']}.py")


@pytest.mark.parametrize(
    ("import_line", "call"),
    [("from {helpers} import repackage_hidden", "repackage_hidden"), ("import {helpers} as hp", "hp.repackage_hidden")],
)
def test_the_fix_calls_the_projects_detaching_helper(diagnose: Any, project: dict[str, Any], import_line: str,
                                                    call: str) -> None:
    _config(project, f"detaches = ['{project['helpers']}.repackage_hidden']\n")
    script = _script(project, LSTM_STATE.format(import_line=import_line.format(helpers=project["helpers"])))
    _, d = diagnose(runpy.run_path, str(script), run_name="__main__")
    assert d is not None and d.failing_call is not None and d.failing_call.line == _line(script, "lstm-fails")
    assert d.carrier is not None and d.carrier.expression == "state"
    assert d.fix.kind is FixKind.DETACH
    assert d.fix.suggestion == f"state = {call}(state)"


def test_without_a_detaching_helper_the_fix_writes_the_detach(diagnose: Any, project: dict[str, Any]) -> None:
    script = _script(project, LSTM_STATE.format(import_line=f"from {project['helpers']} import repackage_hidden"))
    _, d = diagnose(runpy.run_path, str(script), run_name="__main__")
    assert d is not None and d.fix.suggestion == "state = tuple(h.detach() for h in state)"


def test_an_invalid_api_table_is_reported_once_and_the_monitor_goes_on(
        diagnose: Any, project: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    _config(project, "calls_backward = ['x.Engine.step']\n")
    script = _script(project, LSTM_STATE.format(import_line=""))
    _, d = diagnose(runpy.run_path, str(script), run_name="__main__")
    err = capsys.readouterr().err
    assert err.count("gradguard:") == 1 and "unknown key 'calls_backward'" in err and "pyproject.toml" in err
    assert d is not None and d.fix.suggestion == "state = tuple(h.detach() for h in state)"


def test_declared_helpers_are_matched_by_module_and_qualified_name(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.gradguard.api]\ncalls-backward = ['pkg.engine.Engine.step']\ndetaches = ['utils.repackage_hidden']\n",
        encoding="utf-8")
    (tmp_path / "sub").mkdir()
    api = load(str(tmp_path / "sub"))  # found walking up, as the lint finds it
    assert api == ProjectAPI(frozenset({"pkg.engine.Engine.step"}), ("utils.repackage_hidden",))
    source = "class Engine:\n    def step(self, loss):\n        pass\n    def other(self):\n        pass\n"
    module = compile(source, str(tmp_path / "engine.py"), "exec")
    cls = next(c for c in module.co_consts if hasattr(c, "co_consts"))
    step, other = (c for c in cls.co_consts if hasattr(c, "co_qualname"))
    assert api.runs_backward(step) and not api.runs_backward(other)
    elsewhere = compile(source, str(tmp_path / "trainer.py"), "exec")
    moved = next(c for c in next(c for c in elsewhere.co_consts if hasattr(c, "co_consts")).co_consts
                 if hasattr(c, "co_qualname"))
    assert not api.runs_backward(moved)  # Engine.step of another module


PROBE = '''"""What the outputs are most sensitive to: logged, never trained on."""
import torch


def sensitivity(outputs, inputs):
    (grads,) = torch.autograd.grad(outputs.sum(), inputs)
    return grads.norm().item()
'''
PENALTY = '''"""A penalty on the loss's gradient with respect to the inputs (double backpropagation)."""
import torch


def gradient_penalty(loss, inputs):
    (grads,) = torch.autograd.grad(loss, inputs)
    return grads.pow(2).sum(dim=1).mean()
'''
USES_HELPER = '''import torch
import torch.nn as nn

from {module} import {helper}

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(5, 6, requires_grad=True)
    logits = model(x)
    loss = nn.functional.cross_entropy(logits, torch.tensor([0, 1, 0, 1, 1]))
    {use}
    optimizer.zero_grad()
    loss.backward()  # fails
    optimizer.step()
'''


@pytest.mark.parametrize(("text", "helper", "use", "kind"), [
    (PROBE, "sensitivity", "print(sensitivity(logits, x))", FixKind.RETAIN_GRAPH),
    (PENALTY, "gradient_penalty", "loss = loss + 0.1 * gradient_penalty(loss, x)", FixKind.CREATE_GRAPH),
], ids=["logged", "penalty"])
def test_a_helper_s_grad_gets_the_fix_kind_lint_gives_it(diagnose: Any, project: dict[str, Any], text: str,
                                                         helper: str, use: str, kind: FixKind) -> None:
    from gradguard.analysis import analyze

    module = f"probe_{uuid.uuid4().hex[:8]}"
    (Path(project["root"]) / f"{module}.py").write_text(text, encoding="utf-8")
    script = _script(project, USES_HELPER.format(module=module, helper=helper, use=use))
    try:
        _, d = diagnose(runpy.run_path, str(script), run_name="__main__")
    finally:
        sys.modules.pop(module, None)
    assert d is not None and d.fix.kind is kind
    (finding,) = analyze(script.read_text(), path=str(script))
    keyword = "retain_graph" if kind is FixKind.RETAIN_GRAPH else "create_graph"
    assert finding.code == "GG007" and finding.fix is not None and keyword in finding.fix.message
