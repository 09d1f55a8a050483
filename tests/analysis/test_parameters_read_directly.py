"""A module's own parameter read directly, not through a call of the module that computes with it.

SAC's learned temperature is a module whose forward returns its parameter (`log_alpha()`), or the
parameter is read as an attribute (`temperature.log_alpha`). An op that keeps it for its backward
(`log_alpha() ** 2` keeps its base; `a * b` keeps each operand for the other's gradient) made a node
that the temperature optimizer's step changes under it: the actor's backward through that graph after
the step fails ("modified by an inplace operation", GG011). Ops that keep nothing of it (`+ 1.0`), or
keep only their result (`.exp()`), and the graph made after the step, are fine
(`Evaluator.parameter_read`, `AutogradEvents._parameters_read_of`). Each program runs under torch as
the test says, in one file and with the temperature's class in a module of its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fixture_support import run_programs, values_after

from gradguard.analysis import analyze

TEMPERATURE = '''
class Scalar(nn.Module):
    """A learned scalar: its forward returns the parameter itself."""

    def __init__(self, init_value: float):
        super().__init__()
        self.constant = nn.Parameter(torch.tensor(init_value, dtype=torch.float32))

    def forward(self) -> nn.Parameter:
        return self.constant
'''

SAC = '''"""Soft actor-critic's temperature step between the actor's forward and its loss."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

IMPORT


class Actor(nn.Module):
    def __init__(self, obs_dim=6, act_dim=2):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, 2 * act_dim))

    def forward(self, obs):
        mean, log_std = self.body(obs).chunk(2, dim=-1)
        std = log_std.clamp(-5, 2).exp()
        action = mean + std * torch.randn_like(std)
        log_prob = (-0.5 * ((action - mean) / std) ** 2 - std.log()).sum(-1)
        return torch.tanh(action), log_prob


def update(actor, log_alpha, actor_opt, alpha_opt, obs, target_entropy=-2.0):
    action, log_prob = actor(obs)
    ALPHA
    alpha_loss = -(log_alpha() * (log_prob.detach() + target_entropy)).mean()
    alpha_opt.zero_grad()
    alpha_loss.backward()
    alpha_opt.step()
    LATE
    actor_loss = (alpha * log_prob - action.pow(2).sum(-1)).mean()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()
    return actor_loss.item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    torch.manual_seed(0)
    actor, log_alpha = Actor(), Scalar(0.0)
    actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
    alpha_opt = torch.optim.Adam(log_alpha.parameters(), lr=1e-3)
    for _ in range(args.steps):
        update(actor, log_alpha, actor_opt, alpha_opt, torch.randn(8, 6))
    print("ok")


if __name__ == "__main__":
    main()
'''

# (the line computing alpha early, the one after the temperature's step): whether torch fails.
CASES = {
    "power_of_the_forward": ("alpha = log_alpha() ** 2", "pass", True),
    "product_of_the_attribute": ("alpha = log_alpha.constant * log_alpha.constant", "pass", True),
    "power_of_the_attribute": ("alpha = log_alpha.constant ** 2", "pass", True),
    "sum_keeps_nothing": ("alpha = log_alpha() + 1.0", "pass", False),
    "exp_keeps_its_result": ("alpha = log_alpha().exp()", "pass", False),
    "computed_after_the_step": ("pass", "alpha = log_alpha() ** 2", False),
    "detached": ("alpha = (log_alpha() ** 2).detach()", "pass", False),
}


def _program(case: str, package: bool) -> dict[str, str]:
    early, late, _ = CASES[case]
    source = SAC.replace("ALPHA", early).replace("LATE", late)
    if not package:
        return {"train.py": source.replace("IMPORT", TEMPERATURE)}
    header = "import torch\nimport torch.nn as nn\n"
    return {"train.py": source.replace("IMPORT", "from temperature import Scalar"),
            "temperature.py": header + TEMPERATURE}


def _write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder / "train.py"


def _errors(path: Path) -> list[tuple[int, str]]:
    source = path.read_text(encoding="utf-8")
    return [(d.span.start.row, d.code) for d in analyze(source, path=str(path)) if d.severity.value == "error"]


def _backward_row(path: Path) -> int:
    return 1 + path.read_text(encoding="utf-8").splitlines().index("    actor_loss.backward()")


@pytest.mark.parametrize("package", [False, True], ids=["one-file", "package"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_parameter_kept_by_an_op_is_changed_by_its_optimizers_step(tmp_path: Path, case: str, package: bool) -> None:
    path = _write(tmp_path / case, _program(case, package))
    fails = CASES[case][2]
    assert _errors(path) == ([(_backward_row(path), "GG011")] if fails else [])


def test_the_programs_fail_under_torch_as_the_cases_say(tmp_path: Path) -> None:
    paths = {case: _write(tmp_path / case, _program(case, package=True)) for case in CASES}
    ended = run_programs({path: [] for path in paths.values()})
    for case, path in paths.items():
        outcome = ended[path]
        if CASES[case][2]:
            assert "modified by an inplace operation" in (outcome.error_message or ""), case
        else:
            assert outcome.ok and outcome.stdout.strip().endswith("ok"), case


def test_a_parameter_made_without_grad_requires_none() -> None:
    """The model itself: `nn.Parameter(t, requires_grad=False)` (PopArt's running statistics, updated in
    place by the normaliser's forward: r63) is a tensor that requires no grad, by keyword or position."""
    source = (
        "import torch\nimport torch.nn as nn\n"
        "stats = nn.Parameter(torch.zeros(3), requires_grad=False)\n"
        "term = nn.Parameter(torch.tensor(0.0), False)\n"
        "weight = nn.Parameter(torch.zeros(3))\n"
        "done = 1\n"
    )
    assert [value.grad for value in values_after(source, "done", "stats")] == [False]
    assert [value.grad for value in values_after(source, "done", "term")] == [False]
    assert [value.grad for value in values_after(source, "done", "weight")] == [True]
