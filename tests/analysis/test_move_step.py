"""GG011's fix kind `move_step`: when another optimizer trains the parameters the step changed (each
task's optimizer over a shared encoder), both losses' gradients are meant to come from the same
weights, so every backward runs first and the steps after; when no other optimizer trains them
(an actor's loss through a critic the critic's step changed), the forward runs again after the
step. Lint and the runtime monitor decide it from the same evidence (`shared_parameters`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gradguard.analysis import analyze
from gradguard.fixes import choose_fixes, fix_text_round
from gradguard.rules import decisions_for
from tests.fixture_support import run_source_many

MULTITASK = '''\
"""Two tasks over one encoder: a classifier head and a regression head, an optimizer per task."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU())
        self.classify = nn.Linear(16, 3)
        self.regress = nn.Linear(16, 1)

    def forward(self, x):
        h = self.encoder(x)
        return self.classify(h), self.regress(h).squeeze(-1)


def batches(n=6):
    return [(torch.randn(8, 6), torch.randint(0, 3, (8,)), torch.randn(8)) for _ in range(n)]


model = TwoHeads()
opt_a = torch.optim.SGD(list(model.encoder.parameters()) + list(model.classify.parameters()), lr=0.1)
opt_b = torch.optim.SGD(list(model.encoder.parameters()) + list(model.regress.parameters()), lr=0.05)
for epoch in range(2):
    for x, y_a, y_b in batches():
        logits, reg = model(x)
        loss_a = F.cross_entropy(logits, y_a)
        loss_b = F.mse_loss(reg, y_b)
        opt_a.zero_grad()
        loss_a.backward(retain_graph=True)
        opt_a.step()
        opt_b.zero_grad()
        loss_b.backward()
        opt_b.step()
print(f"loss_a {loss_a.item():.6f} loss_b {loss_b.item():.6f}",
      f"param_sum {sum(p.sum().item() for p in model.parameters()):.6f}")
'''

HAND_FIX = MULTITASK.replace('''        opt_a.zero_grad()
        loss_a.backward(retain_graph=True)
        opt_a.step()
        opt_b.zero_grad()
        loss_b.backward()
        opt_b.step()''', '''        opt_a.zero_grad()
        opt_b.zero_grad()
        loss_a.backward(retain_graph=True)
        loss_b.backward()
        opt_a.step()
        opt_b.step()''')

# The actor's loss goes through the critic, which only the critic's optimizer trains.
ACTOR_CRITIC = '''\
"""Deterministic actor-critic: the critic regresses a target, the actor ascends the critic."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
actor = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
critic = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
for step in range(5):
    s, target = torch.randn(8, 4), torch.randn(8, 1)
    q = critic(torch.cat([s, actor(s)], dim=1))
    critic_loss = F.mse_loss(q, target)
    actor_loss = -q.mean()
    critic_opt.zero_grad()
    critic_loss.backward(retain_graph=True)
    critic_opt.step()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()
print("done")
'''

MONITORED = """
import sys
sys.path.insert(0, {repo!r})
from gradguard.runtime.runner import run_program
raise SystemExit(run_program({path!r}, [], module=False, report={report!r}, deep=False))
"""


def _fixed(source: str) -> str:
    found = analyze(source)
    fixes = choose_fixes(found, unsafe=True)
    assert fixes, [d.message for d in found]
    return fix_text_round(source, fixes)[0]


def test_the_steps_of_optimizers_sharing_parameters_move_after_the_last_backward() -> None:
    (decision,) = decisions_for(MULTITASK)
    assert (decision.code, str(decision.kind)) == ("GG011", "move_step")
    fixed = _fixed(MULTITASK)
    body = fixed[fixed.index("for x, y_a, y_b"):]
    order = [line.strip() for line in body.splitlines()[4:10]]
    assert order == ["opt_a.zero_grad()", "opt_b.zero_grad()", "loss_a.backward(retain_graph=True)",
                     "loss_b.backward()", "opt_a.step()", "opt_b.step()"]
    assert analyze(fixed) == ()


def test_a_loss_through_a_module_only_the_stepped_optimizer_trains_is_computed_again() -> None:
    (decision,) = decisions_for(ACTOR_CRITIC)
    assert (decision.code, str(decision.kind)) == ("GG011", "recompute_in_loop")


@pytest.mark.torch
def test_the_moved_steps_train_as_the_hand_fix_and_the_monitor_decides_the_same(tmp_path: Path) -> None:
    repo = str(Path(__file__).resolve().parents[2])
    jobs: dict[str, str] = {"fixed": _fixed(MULTITASK), "hand": HAND_FIX}
    for name, source in (("multitask", MULTITASK), ("actor_critic", ACTOR_CRITIC)):
        path = tmp_path / f"{name}.py"
        path.write_text(source, encoding="utf-8")
        jobs[f"monitored:{name}"] = MONITORED.format(repo=repo, path=str(path), report=str(tmp_path / f"{name}.json"))
    runs = run_source_many(jobs, timeout=240)
    assert runs["fixed"].error_type is None, runs["fixed"].stderr
    assert runs["fixed"].stdout == runs["hand"].stdout
    for name, kind in (("multitask", "move_step"), ("actor_critic", "recompute_in_loop")):
        report = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
        assert (report["rule"], report["fix"]["kind"]) == ("GG011", kind), (name, report["fix"], sys.version)


def _one_layer(source: str) -> str:
    return source.replace("nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU())",
                          "nn.Sequential(nn.Linear(6, 16), nn.ReLU())")


def test_a_step_on_a_layer_called_on_data_that_keeps_no_weights_breaks_nothing() -> None:
    # A Linear called on data keeps its input, not its weight (its weight's gradient needs the input
    # alone): stepping the encoder's optimizer between the two backward calls changes nothing the later
    # backward reads, and the program runs (the test below runs it).
    assert analyze(_one_layer(MULTITASK)) == ()
    assert [d.code for d in analyze(MULTITASK)] == ["GG011"]


@pytest.mark.torch
def test_the_one_layer_program_runs() -> None:
    runs = run_source_many({"one": _one_layer(MULTITASK)}, timeout=120)
    assert runs["one"].error_type is None, runs["one"].stderr
