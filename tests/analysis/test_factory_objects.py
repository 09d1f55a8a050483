"""Objects a factory returns and classes a method builds (GFNOrg/torchgfn, realbugs): an environment
whose `make_States_class()` defines and returns a class, and a replay buffer that extends its stored
trajectories with each iteration's sampled ones, whose `log_probs` carry the sampler's graph. Each
`return Trajectories(...)` is its own object: the buffer's trajectories are not the ones the next
`sample()` makes, so what the buffer keeps reaches the next backward. Stored detached, it does not.
The same program with the loop in a function taking the policy, and with the buffer's container chosen
by a test. Each program runs under torch as the test says.
"""

from __future__ import annotations

from pathlib import Path

from fixture_support import error_lines, run_programs, values_after

from gradguard.analysis.state import heap_owner
from gradguard.analysis.values import Kind

ENVS = '''"""A small grid environment whose states class is built per environment (torchgfn's shape)."""
from abc import ABC, abstractmethod

import torch


class States(ABC):
    s0: torch.Tensor

    def __init__(self, tensor):
        self.tensor = tensor

    @classmethod
    def from_batch_shape(cls, batch_shape):
        return cls(cls.s0.repeat(*batch_shape, 1))

    def __len__(self):
        return self.tensor.shape[0]


class Env(ABC):
    def __init__(self, s0):
        self.s0 = s0
        self.States = self.make_States_class()

    @abstractmethod
    def make_States_class(self):
        pass


class Grid(Env):
    def __init__(self, ndim=2):
        self.ndim = ndim
        super().__init__(torch.zeros(ndim))

    def make_States_class(self):
        env = self

        class GridStates(States):
            s0 = env.s0

        return GridStates
'''

CONTAINERS = '''"""Sampled trajectories and a replay buffer of them."""
import torch


class Trajectories:
    def __init__(self, env, states=None, log_probs=None):
        self.env = env
        self.states = states if states is not None else env.States.from_batch_shape((0,))
        self.log_probs = log_probs if log_probs is not None else torch.zeros(0)

    def __len__(self):
        return self.log_probs.shape[0]

    def extend(self, other):
        self.states = self.env.States(torch.cat([self.states.tensor, other.states.tensor]))
        self.log_probs = torch.cat([self.log_probs, other.log_probs])

    def last(self, n):
        return Trajectories(self.env, self.env.States(self.states.tensor[-n:]), self.log_probs[-n:])


class ReplayBuffer:
    def __init__(self, env, by_state=False, capacity=64):
        self.capacity = capacity
        if by_state:
            self.objects = env.States.from_batch_shape((0,))
        else:
            self.objects = Trajectories(env)

    def add(self, trajectories):
        STORE
        self.objects = self.objects.last(self.capacity)

    def sample(self, n):
        return self.objects.last(n)
'''

TRAIN = '''"""Fit a tiny policy by trajectory balance, replaying past trajectories."""
import argparse

import torch
from torch import nn

from containers import ReplayBuffer, Trajectories
from envs import Grid

parser = argparse.ArgumentParser()
parser.add_argument("--iterations", type=int, default=3)
parser.add_argument("--replay", type=int, default=16)
args = parser.parse_args()

torch.manual_seed(0)
env = Grid(ndim=2)
policy = nn.Linear(2, 3)
log_z = nn.Parameter(torch.zeros(()))
optimizer = torch.optim.Adam([*policy.parameters(), log_z], lr=1e-2)
buffer = ReplayBuffer(env, capacity=args.replay) if args.replay > 0 else None


def sample(n):
    states = env.States(torch.rand(n, 2))
    log_probs = torch.log_softmax(policy(states.tensor), dim=1)[:, 0]
    return Trajectories(env, states, log_probs)


for it in range(args.iterations):
    trajectories = sample(8)
    if buffer is not None:
        buffer.add(trajectories)
        batch = buffer.sample(8)
    else:
        batch = trajectories
    optimizer.zero_grad()
    loss = ((log_z + batch.log_probs) ** 2).mean()
    loss.backward()
    optimizer.step()
print("ok")
'''

KEEPS_GRAPH = "self.objects.extend(trajectories)"
DETACHED = "self.objects.extend(Trajectories(trajectories.env, trajectories.states, trajectories.log_probs.detach()))"


def _in_a_function(train: str) -> str:
    """The loop moved into `fit(policy, buffer, iterations)`, called from `main()`."""
    head, loop = train.split("for it in range(args.iterations):")
    body, tail = loop.split('print("ok")')
    fit = ("def fit(policy, buffer, optimizer, iterations):\n"
           "    for it in range(iterations):" + body.replace("\n    ", "\n        ") + "\n")
    return head + fit + "\nfit(policy, buffer, optimizer, args.iterations)\n" + 'print("ok")\n'


def _program(tmp_path: Path, name: str, store: str, in_function: bool = False, by_state: bool = False) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "envs.py").write_text(ENVS, encoding="utf-8")
    (folder / "containers.py").write_text(CONTAINERS.replace("STORE", store), encoding="utf-8")
    train = _in_a_function(TRAIN) if in_function else TRAIN
    if by_state:
        train = train.replace("ReplayBuffer(env, capacity", "ReplayBuffer(env, by_state=args.replay < 0, capacity")
    (folder / "train.py").write_text(train, encoding="utf-8")
    return folder / "train.py"


def test_a_buffer_keeps_what_a_factory_returned(tmp_path: Path) -> None:
    for variant in [dict(), dict(in_function=True)]:
        name = "_".join(variant) or "plain"
        assert error_lines(_program(tmp_path, f"bug_{name}", KEEPS_GRAPH, **variant)) == [
            ("GG003", "loss.backward()")], variant
        assert error_lines(_program(tmp_path, f"fixed_{name}", DETACHED, **variant)) == [], variant


def test_a_buffer_whose_container_a_test_chooses(tmp_path: Path) -> None:
    """The buffer's container is a `GridStates` or a `Trajectories` as a test in its `__init__` says:
    an object of one of two classes, each class's `extend` followed (`Value.others`); `GridStates`,
    all of whose code is seen, has no `last`, so no path calls it on one."""
    assert error_lines(_program(tmp_path, "bug", KEEPS_GRAPH, by_state=True)) == [("GG003", "loss.backward()")]


def test_the_fixed_twin_with_a_chosen_container_is_clean(tmp_path: Path) -> None:
    assert error_lines(_program(tmp_path, "fixed", DETACHED, by_state=True)) == []


def test_the_programs_behave_under_torch(tmp_path: Path) -> None:
    bug, fixed = _program(tmp_path, "bug", KEEPS_GRAPH), _program(tmp_path, "fixed", DETACHED)
    moved = _program(tmp_path, "moved", KEEPS_GRAPH, in_function=True)
    chosen = _program(tmp_path, "chosen", KEEPS_GRAPH, by_state=True)
    ended = run_programs({bug: [], fixed: [], moved: [], chosen: []})
    for failing in (bug, moved, chosen):
        assert "backward through the graph a second time" in (ended[failing].error_message or ""), failing
    assert ended[fixed].ok and ended[fixed].stdout.strip().endswith("ok"), ended[fixed].traceback


def test_model_classes_of_methods_and_factory_results(tmp_path: Path) -> None:
    """The model itself: a class a project module's method defines is a class of the program (and
    `env.States` that class), and each function's `return Cls(...)` is its own object: the sampled
    trajectories are not the buffer's."""
    script = _program(tmp_path, "plain", DETACHED)
    source, path = script.read_text(encoding="utf-8"), str(script)
    seen = {name: values_after(source, "loss.backward()", name, path=path)
            for name in ("env.States", "trajectories", "batch")}
    assert {(v.kind, v.ref.name) for v in seen["env.States"]} == {(Kind.CLASS, "GridStates")}
    sampled = {heap_owner(v) for v in seen["trajectories"]}
    replayed = {heap_owner(v) for v in seen["batch"] if v.kind is Kind.INSTANCE} - sampled
    assert sampled == {"containers:Trajectories@sample()"}
    assert replayed == {"containers:Trajectories@Trajectories.last()"}
