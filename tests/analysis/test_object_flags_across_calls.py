"""A flag of an object (`self.tune`, set once in `__init__` from the command line) tested inside a
method the loop calls: each path of the program keeps its truth from one call to the next, so what
the tuned path stores on the object (`self.alpha = self.log_alpha.exp()`, rebuilt every update) is
never met by code of the other path; nor is an older generation of it, which a join of loop passes
folds in (the pass before holds the alpha of the iteration before)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from gradguard.analysis import analyze

SAC = textwrap.dedent('''\
\"\"\"Soft actor-critic on random transitions, with optional automatic entropy tuning.\"\"\"
import argparse
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Adam


class Memory:
    def __init__(self, capacity):
        self.capacity = capacity
        self.items = []

    def push(self, state, action, reward):
        if len(self.items) >= self.capacity:
            self.items.pop(0)
        self.items.append((state, action, reward))

    def sample(self, batch_size):
        batch = random.sample(self.items, batch_size)
        states, actions, rewards = map(torch.stack, zip(*batch))
        return states, actions, rewards

    def __len__(self):
        return len(self.items)


class Agent:
    def __init__(self, args):
        self.alpha = args.alpha
        self.tune = args.tune
        self.policy = nn.Linear(4, 2)
        self.critic = nn.Linear(6, 1)
        self.policy_optim = Adam(self.policy.parameters(), lr=1e-3)
        self.critic_optim = Adam(self.critic.parameters(), lr=1e-3)
        if self.tune:
            self.log_alpha = torch.zeros(1, requires_grad=True)
            self.alpha_optim = Adam([self.log_alpha], lr=1e-3)

    def update(self, memory, batch_size):
        states, actions, rewards = memory.sample(batch_size)
        q = self.critic(torch.cat([states, actions], 1)).squeeze(1)
        critic_loss = F.mse_loss(q, rewards)
        self.critic_optim.zero_grad()
        critic_loss.backward()
        self.critic_optim.step()

        log_pi = self.policy(states).log_softmax(-1)
        q_pi = self.critic(torch.cat([states, log_pi.exp()], 1))
        policy_loss = (self.alpha * log_pi.sum(1, keepdim=True) - q_pi).mean()
        self.policy_optim.zero_grad()
        policy_loss.backward()
        self.policy_optim.step()

        if self.tune:
            alpha_loss = -(self.log_alpha * (log_pi.detach() + 1.0)).mean()
            self.alpha_optim.zero_grad()
            alpha_loss.backward()
            self.alpha_optim.step()
            self.alpha = self.log_alpha.exp()
        return critic_loss.item(), policy_loss.item()


parser = argparse.ArgumentParser()
parser.add_argument("--alpha", type=float, default=0.2)
parser.add_argument("--tune", action="store_true")
parser.add_argument("--steps", type=int, default=60)
args = parser.parse_args()

torch.manual_seed(0)
random.seed(0)
agent = Agent(args)
memory = Memory(1000)
for step in range(args.steps):
    memory.push(torch.randn(4), torch.randn(2), torch.randn(()))
    if len(memory) > 16:
        critic_loss, policy_loss = agent.update(memory, 16)
print(f"critic {critic_loss:.4f} policy {policy_loss:.4f}")
''')

# The tuned path computes alpha once, in `__init__`: every update's policy backward goes through it.
ALPHA_ONCE = SAC.replace("""            self.alpha_optim = Adam([self.log_alpha], lr=1e-3)
""", """            self.alpha_optim = Adam([self.log_alpha], lr=1e-3)
            self.alpha = self.log_alpha.exp()
""", 1).replace("""            self.alpha_optim.step()
            self.alpha = self.log_alpha.exp()
""", """            self.alpha_optim.step()
""")

IN_A_FUNCTION = ("""agent = Agent(args)
memory = Memory(1000)
for step in range(args.steps):
    memory.push(torch.randn(4), torch.randn(2), torch.randn(()))
    if len(memory) > 16:
        critic_loss, policy_loss = agent.update(memory, 16)""", """

def train(agent, memory, steps):
    for step in range(steps):
        memory.push(torch.randn(4), torch.randn(2), torch.randn(()))
        if len(memory) > 16:
            critic_loss, policy_loss = agent.update(memory, 16)
    return critic_loss, policy_loss


critic_loss, policy_loss = train(Agent(args), Memory(1000), args.steps)""")

AS_WHILE = ("""for step in range(args.steps):
    memory.push""", """step = 0
while step < args.steps:
    step += 1
    memory.push""")


def _codes(source: str, path: Path | None = None) -> list[tuple[str, int]]:
    found = analyze(source, path=str(path) if path is not None else None)
    return sorted((d.code, d.span.start.row) for d in found)


def test_alpha_rebuilt_on_the_tuned_path_is_clean() -> None:
    assert _codes(SAC) == []


def test_alpha_computed_once_on_the_tuned_path_is_found() -> None:
    assert _codes(ALPHA_ONCE) == [("GG006", 55)]


def test_rewrites_keep_the_verdicts() -> None:
    for old, new in (IN_A_FUNCTION, AS_WHILE):
        assert old in SAC
        assert _codes(SAC.replace(old, new)) == []
        assert _codes(ALPHA_ONCE.replace(old, new)) == [("GG006", 55)]


def test_classes_in_another_module_keep_the_verdicts(tmp_path: Path) -> None:
    head = SAC.split("\n\nclass Memory:", 1)[0]
    for name, source in (("clean", SAC), ("buggy", ALPHA_ONCE)):
        folder = tmp_path / name
        folder.mkdir()
        _, rest = source.split("\n\nclass Memory:", 1)
        classes, script = rest.split("\n\nparser = argparse", 1)
        (folder / "lib.py").write_text(head.replace("import argparse\n", "") + "\n\nclass Memory:" + classes + "\n")
        train = folder / "train.py"
        train.write_text("import argparse\nimport random\n\nimport torch\n\nfrom lib import Agent, Memory\n\n"
                         "parser = argparse" + script)
        found = _codes(train.read_text(), train)
        # In the script, the finding is at the call that runs the method's backward.
        call = 1 + train.read_text().splitlines().index("        critic_loss, policy_loss = agent.update(memory, 16)")
        assert found == ([] if name == "clean" else [("GG006", call)]), (name, found)

