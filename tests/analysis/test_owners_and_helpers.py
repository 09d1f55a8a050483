"""The model on who owns what an optimizer updates and where a backward runs, in the shapes real
actor-critic code takes (reduced from firedup's DDPG, rlkit's and spirl's SAC):

- a module called inside another module's forward (`self.q(...)` run by `main(x)`) is `main.q` to an
  optimizer built over `main.q.parameters()`;
- a class or optimizer class given as a parameter's default (`actor_critic=core.ActorCritic`,
  `optimizer_class=optim.Adam`) is what an entry's unseen argument holds;
- an optimizer built by a callable the analysis cannot read is the optimizer of the module whose
  parameters it is given, and an object the code calls `zero_grad()` and `step()` on is an optimizer;
- a backward in a helper of another module (a base class method) is reported at the linted file's
  call that ran it, named by the argument it was passed, even in a file that calls no backward itself.

Each buggy program has a correct twin (the policy loss computed after the critic's step, or the
policy updated first) that must stay silent.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gradguard.analysis import analyze

CORE = """\
import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = torch.relu(layer(x))
        return self.layers[-1](x)


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.policy = MLP([obs_dim, 16, act_dim])
        self.q = MLP([obs_dim + act_dim, 16, 1])

    def forward(self, obs, act):
        pi = torch.tanh(self.policy(obs))
        q = self.q(torch.cat([obs, act], 1))
        q_pi = self.q(torch.cat([obs, pi], 1))
        return pi, q, q_pi
"""

DDPG = """\
import torch
import torch.nn.functional as F

import core


def ddpg(actor_critic=core.ActorCritic, steps=100):
    main = actor_critic(3, 1)
    pi_optimizer = torch.optim.Adam(main.policy.parameters(), lr=1e-3)
    q_optimizer = torch.optim.Adam(main.q.parameters(), lr=1e-3)
    for _ in range(steps):
        obs, act, target = torch.randn(8, 3), torch.randn(8, 1), torch.randn(8, 1)
        _, q, q_pi = main(obs, act)
        pi_loss = -q_pi.mean()
        q_loss = F.mse_loss(q, target)
        q_optimizer.zero_grad()
        q_loss.backward()
        q_optimizer.step()
{policy_update}
"""

POLICY_AFTER_STEP = """\
        pi_optimizer.zero_grad()
        pi_loss.backward()
        pi_optimizer.step()
"""

POLICY_RECOMPUTED = """\
        _, _, q_pi = main(obs, act)
        pi_loss = -q_pi.mean()
        pi_optimizer.zero_grad()
        pi_loss.backward()
        pi_optimizer.step()
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return root / next(iter(files))


def _findings(script: Path) -> list[tuple[str, str]]:
    source = script.read_text(encoding="utf-8")
    lines = source.splitlines()
    return [(d.code, lines[d.span.start.row - 1].strip()) for d in analyze(source, path=str(script))]


def test_a_module_called_inside_a_forward_is_owned_by_the_optimizer_of_its_outside_name(tmp_path: Path) -> None:
    script = _write(tmp_path, {"ddpg.py": DDPG.format(policy_update=POLICY_AFTER_STEP), "core.py": CORE})
    assert _findings(script) == [("GG011", "pi_loss.backward()")]
    message = analyze(script.read_text(), path=str(script))[0].message
    assert "`q_pi`" in message  # the value the training code holds, not a layer output inside MLP


def test_the_policy_loss_computed_again_after_the_step_is_clean(tmp_path: Path) -> None:
    script = _write(tmp_path, {"ddpg.py": DDPG.format(policy_update=POLICY_RECOMPUTED), "core.py": CORE})
    assert _findings(script) == []


TRAINER = """\
import torch
import torch.nn.functional as F
{imports}


class Trainer:
    def __init__(self, qf, policy, {optimizer_param}):
        self.qf = qf
        self.policy = policy
        self.qf_optimizer = {make}(self.qf.parameters(), lr=1e-3)
        self.policy_optimizer = {make}(self.policy.parameters(), lr=1e-3)

    def train_step(self, obs, act):
        q_new = self.qf(torch.cat([obs, self.policy(obs)], 1))
        policy_loss = -q_new.mean()
        q = self.qf(torch.cat([obs, act], 1))
        q_loss = F.mse_loss(q, torch.zeros_like(q))
        self.qf_optimizer.zero_grad()
        q_loss.backward()
        self.qf_optimizer.step()
        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()
"""

TRAINER_OK = TRAINER.replace(
    """        self.qf_optimizer.zero_grad()
        q_loss.backward()
        self.qf_optimizer.step()
        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()
""",
    """        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()
        self.qf_optimizer.zero_grad()
        q_loss.backward()
        self.qf_optimizer.step()
""")

OPTIMIZERS = {
    "class-default": ("from torch import optim", "optimizer_class=optim.Adam", "optimizer_class"),
    "unknown-factory": ("from somewhere_else import build_optimizer", "lr=1e-3", "build_optimizer"),
    "called-parameter": ("", "optimizer_class=None", "optimizer_class"),
}


@pytest.mark.parametrize("shape", sorted(OPTIMIZERS))
def test_optimizers_made_by_what_the_analysis_cannot_read_own_the_module_they_are_given(
        tmp_path: Path, shape: str) -> None:
    imports, param, make = OPTIMIZERS[shape]
    buggy = _write(tmp_path, {"sac.py": TRAINER.format(imports=imports, optimizer_param=param, make=make)})
    assert _findings(buggy) == [("GG011", "policy_loss.backward()")]
    fine = _write(tmp_path, {"sac.py": TRAINER_OK.format(imports=imports, optimizer_param=param, make=make)})
    assert _findings(fine) == []


BASE = """\
class BaseAgent:
    def _perform_update(self, loss, opt):
        opt.zero_grad()
        loss.backward()
        opt.step()
"""

AGENT = """\
import torch
import torch.nn as nn
from base import BaseAgent


def make_optimizers(modules):
    return [torch.optim.Adam(m.parameters()) for m in modules]


class SAC(BaseAgent):
    def __init__(self):
        self.policy = nn.Linear(3, 1)
        self.critic = nn.Linear(4, 1)
        self.policy_opt, self.critic_opt = make_optimizers([self.policy, self.critic])

    def update(self, obs, act):
        q_pi = self.critic(torch.cat([obs, self.policy(obs)], 1))
        policy_loss = -q_pi.mean()
        q = self.critic(torch.cat([obs, act], 1))
        critic_loss = (q ** 2).mean()
{updates}


if __name__ == "__main__":
    agent = SAC()
    for _ in range(3):
        agent.update(torch.randn(5, 3), torch.randn(5, 1))
"""

CRITIC_FIRST = """\
        self._perform_update(critic_loss, self.critic_opt)
        self._perform_update(policy_loss, self.policy_opt)
"""

POLICY_FIRST = """\
        self._perform_update(policy_loss, self.policy_opt)
        self._perform_update(critic_loss, self.critic_opt)
"""


def test_a_backward_in_a_base_class_of_another_module_is_reported_at_the_call_that_ran_it(tmp_path: Path) -> None:
    script = _write(tmp_path, {"agent.py": AGENT.format(updates=CRITIC_FIRST), "base.py": BASE})
    assert _findings(script) == [("GG011", "self._perform_update(policy_loss, self.policy_opt)")]
    message = analyze(script.read_text(), path=str(script))[0].message
    assert "`policy_loss`" in message and "base.py:4" in message


def test_the_policy_updated_before_the_critic_through_the_same_helper_is_clean(tmp_path: Path) -> None:
    script = _write(tmp_path, {"agent.py": AGENT.format(updates=POLICY_FIRST), "base.py": BASE})
    assert _findings(script) == []


def test_a_file_that_calls_no_backward_itself_is_screened_in_by_its_imported_helpers(tmp_path: Path) -> None:
    from gradguard.analysis.reach import runs_imported_backward

    script = _write(tmp_path, {"agent.py": AGENT.format(updates=CRITIC_FIRST), "base.py": BASE})
    assert "backward" not in script.read_text()
    assert runs_imported_backward(str(script), script.read_text())
    unrelated = _write(tmp_path, {"other.py": "from base import BaseAgent\n\nprint(BaseAgent)\n"})
    assert not runs_imported_backward(str(unrelated), unrelated.read_text())


def test_a_module_given_to_init_is_the_attribute_it_is_stored_as(tmp_path: Path) -> None:
    """`self.qf = qf` then `Adam(qf.parameters())`: the optimizer updates `self.qf`."""
    source = TRAINER.format(imports="", optimizer_param="lr=1e-3", make="torch.optim.Adam")
    source = source.replace("self.qf.parameters()", "qf.parameters()").replace(
        "self.policy.parameters()", "policy.parameters()")
    script = _write(tmp_path, {"sac.py": source})
    assert _findings(script) == [("GG011", "policy_loss.backward()")]


ROLLOUT = """\
import torch


def collect(model, obs):
    logits, values = model(obs)
    return torch.log_softmax(logits, -1).max(-1).values, values
"""

A2C = """\
import torch
import torch.nn as nn

from rollout import collect


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(8, 16)
        self.actor = nn.Linear(16, 4)
        self.critic = nn.Linear(16, 1)

    def forward(self, obs):
        h = torch.relu(self.trunk(obs))
        return self.actor(h), self.critic(h).squeeze(-1)


model = ActorCritic()
actor_opt = torch.optim.Adam(list(model.trunk.parameters()) + list(model.actor.parameters()))
critic_opt = torch.optim.Adam(model.critic.parameters())
for update in range(10):
    log_probs, values = collect(model, torch.randn(32, 8))
    advantage = torch.randn(32) - values
    critic_loss = advantage.pow(2).mean()
    actor_loss = -(log_probs * advantage{detach}).mean()
    critic_opt.zero_grad()
    critic_loss.backward(retain_graph=True)
    critic_opt.step()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()
"""


def test_a_layer_of_a_model_run_by_a_helper_of_another_module_is_owned_by_its_optimizer(tmp_path: Path) -> None:
    """`self.critic(h)` inside `model(obs)` called by `collect()` in rollout.py is `model.critic`."""
    script = _write(tmp_path, {"a2c.py": A2C.format(detach=""), "rollout.py": ROLLOUT})
    assert _findings(script) == [("GG011", "actor_loss.backward()")]
    fixed = _write(tmp_path, {"a2c.py": A2C.format(detach=".detach()"), "rollout.py": ROLLOUT})
    assert _findings(fixed) == []


HELPERS = """\
def compute_loss(model, batch, criterion, backward=True):
    inputs, targets = batch
    loss = criterion(model(inputs), targets)
    if backward:
        loss.backward()
    return loss
"""

LOOP = """\
import torch
import torch.nn as nn

from utils import compute_loss

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
for step in range(20):
    batch = (torch.randn(8, 4), torch.randint(0, 2, (8,)))
    optimizer.zero_grad()
    loss = compute_loss(model, batch, criterion{flag})
    loss.backward()
    optimizer.step()
"""


@pytest.mark.parametrize(("flag", "found"), [("", True), (", backward=True", True), (", backward=False", False)])
def test_a_helper_flag_given_as_a_literal_decides_its_branch(tmp_path: Path, flag: str, found: bool) -> None:
    """`if backward:` in a helper whose `backward` is a literal True (passed or default): taken."""
    script = _write(tmp_path, {"train.py": LOOP.format(flag=flag), "utils.py": HELPERS})
    assert _findings(script) == ([("GG001", "loss.backward()")] if found else [])


def test_a_helper_re_exported_by_a_package_init_screens_the_script_in(tmp_path: Path) -> None:
    from gradguard.analysis.reach import runs_imported_backward

    package = tmp_path / "core"
    package.mkdir()
    (package / "__init__.py").write_text("from .engine import Engine\n")
    (package / "engine.py").write_text(
        "class Engine:\n    def step(self, loss):\n        loss.backward()\n")
    script = _write(tmp_path, {"train.py": "from core import Engine\n\nEngine().step(None)\n"})
    assert runs_imported_backward(str(script), script.read_text())


PIX2PIX_TRAIN = """\
from options import parse
from models import create_model

opt = parse()
model = create_model(opt)
for epoch in range(opt.epochs):
    for data in opt.loader:
        model.set_input(data)
        model.optimize_parameters()
"""

PIX2PIX_INIT = """\
def create_model(opt):
    from .pix2pix_model import Pix2PixModel
    model = Pix2PixModel(opt)
    return model
"""

PIX2PIX_MODEL = """\
import torch
import torch.nn as nn


class Pix2PixModel:
    def __init__(self, opt):
        self.netG = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1))
        self.netD = nn.Sequential(nn.Conv2d(6, 8, 4, stride=2), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 4))
        self.criterionGAN = nn.MSELoss()
        self.criterionL1 = nn.L1Loss()
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=2e-4)
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=2e-4)

    def set_input(self, data):
        self.real_A = data["A"]
        self.real_B = data["B"]

    def forward(self):
        self.fake_B = self.netG(self.real_A)

    def backward_D(self):
        fake_AB = torch.cat((self.real_A, self.fake_B{detach}), 1)
        pred_fake = self.netD(fake_AB)
        self.loss_D_fake = self.criterionGAN(pred_fake, torch.zeros_like(pred_fake))
        pred_real = self.netD(torch.cat((self.real_A, self.real_B), 1))
        self.loss_D_real = self.criterionGAN(pred_real, torch.ones_like(pred_real))
        self.loss_D = (self.loss_D_fake + self.loss_D_real) * 0.5
        self.loss_D.backward()

    def backward_G(self):
        pred_fake = self.netD(torch.cat((self.real_A, self.fake_B), 1))
        self.loss_G = self.criterionGAN(pred_fake, torch.ones_like(pred_fake)) \\
            + self.criterionL1(self.fake_B, self.real_B) * 100.0
        self.loss_G.backward()

    def optimize_parameters(self):
        self.forward()
        self.optimizer_D.zero_grad()
        self.backward_D()
        self.optimizer_D.step()
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()
"""


@pytest.mark.parametrize(("detach", "expected"), [("", [("GG005", "model.optimize_parameters()")]), (".detach()", [])])
def test_a_script_whose_backward_runs_two_methods_deep_in_an_imported_model_is_analysed(
        tmp_path: Path, detach: str, expected: list[tuple[str, str]]) -> None:
    """pix2pix's shape: train.py calls `model.optimize_parameters()`, which calls `self.backward_D()`,
    which runs the backward. The script names no backward; the screen follows the calls by name
    inside the imported module."""
    from gradguard.analysis.reach import runs_imported_backward

    (tmp_path / "models").mkdir()
    _write(tmp_path, {"models/__init__.py": PIX2PIX_INIT,
                      "models/pix2pix_model.py": PIX2PIX_MODEL.replace("{detach}", detach),
                      "options.py": "def parse():\n    return None\n"})
    script = _write(tmp_path, {"train.py": PIX2PIX_TRAIN})
    assert runs_imported_backward(str(script), script.read_text())
    assert _findings(script) == expected
    shown = _write(tmp_path, {"show.py": "from models import create_model\n\nprint(create_model(None).real_A)\n"})
    assert not runs_imported_backward(str(shown), shown.read_text())
