"""Statements of one-line suites (`if flag: seed = flag`, `else: seed = 0`, `if done: break`,
`with torch.no_grad(): target = net(x)`) run like the same statements on lines of their own: a name
they bind is bound, a `break` leaves the loop, a forward under `no_grad` makes no graph. (They were
skipped: every name they bound was unbound after them, and a path reading one was dropped as a
NameError, with every finding after it.)"""

from __future__ import annotations

import textwrap

import pytest

from gradguard.analysis import analyze

AGENT = textwrap.dedent('''\
    """An actor-critic agent whose networks are built by a helper with one-line defaults."""
    import torch
    import torch.nn as nn


    class Agent:
        def __init__(self, obs=4, act=2, seed=0):
            self.seed = seed
            self.critic = self.build(obs + act, 1)
            self.actor = self.build(obs, act, override_seed=seed + 1)
            self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3)
            self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=1e-3)

        def build(self, n_in, n_out, override_seed=None, hidden=None):
            if hidden is None: hidden = 32
            if override_seed: seed = override_seed
            else: seed = self.seed
            torch.manual_seed(seed)
            return nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, n_out))

        def update(self, obs, act, target):
            q = self.critic(torch.cat([obs, act], 1))
            critic_loss = (q - target).pow(2).mean()
            pi = torch.tanh(self.actor(obs))
            actor_loss = -self.critic(torch.cat([obs, pi], 1)).mean()
            self.critic_opt.zero_grad()
            critic_loss.backward()
            self.critic_opt.step()
            self.actor_opt.zero_grad()
            actor_loss.backward()
            self.actor_opt.step()


    agent = Agent()
    for step in range(10):
        agent.update(torch.randn(8, 4), torch.randn(8, 2), torch.randn(8, 1))
    ''')


def test_names_bound_by_one_line_if_and_else_are_bound() -> None:
    # `seed` read after the two one-line arms: on neither path is it unbound, so the agent is built and
    # the actor loss, computed through the critic before the critic's step, is found.
    found = analyze(AGENT)
    assert [(d.code, d.span.start.row) for d in found] == [("GG011", 30)]


def test_the_same_agent_with_arms_on_lines_of_their_own_gives_the_same_finding() -> None:
    expanded = AGENT.replace("        if hidden is None: hidden = 32\n",
                             "        if hidden is None:\n            hidden = 32\n")
    expanded = expanded.replace("        if override_seed: seed = override_seed\n        else: seed = self.seed\n",
                                "        if override_seed:\n            seed = override_seed\n"
                                "        else:\n            seed = self.seed\n")
    assert expanded != AGENT
    assert [d.code for d in analyze(expanded)] == ["GG011"]


LOOP = textwrap.dedent('''\
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    net = nn.Linear(4, 1)
    target_net = nn.Linear(4, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    total = 0.0
    for step in range(20):
        x = torch.randn(8, 4)
        with torch.no_grad(): target = target_net(x)
        loss = (net(x) - target).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        for p in net.parameters(): total += p.grad.norm().item()
        if total > 100.0: break
    print(total)
    ''')


def test_a_one_line_no_grad_block_makes_no_graph() -> None:
    assert analyze(LOOP) == ()


@pytest.mark.parametrize("form", ["one-line", "block"])
def test_a_backward_under_a_one_line_condition_is_met_on_the_path_that_takes_it(form: str) -> None:
    source = textwrap.dedent('''\
        import torch
        import torch.nn as nn

        net = nn.Linear(4, 1)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for step in range(20):
            loss = net(torch.randn(8, 4)).pow(2).mean()
            opt.zero_grad()
            if step % 5 == 0: loss.backward()
            loss.backward()
            opt.step()
        ''')
    if form == "block":
        source = source.replace("    if step % 5 == 0: loss.backward()\n",
                                "    if step % 5 == 0:\n        loss.backward()\n")
    found = analyze(source)
    assert [d.code for d in found] == ["GG001"]
