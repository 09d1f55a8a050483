"""`retain_graph=True` hiding a stale graph (the shape of PPO-PyTorch's first version, DeepCTR's
regularisation loss, stable-baselines3's gSDE matrix): a retaining backward in a training loop goes,
after an optimizer step, through a graph built before the loop again. Nothing fails, but every
iteration backpropagates through the old graph and keeps it alive. The model reports it at that
backward; a retaining loop that steps no optimizer (a Jacobian, per-class saliency) is intended.
"""

from __future__ import annotations

import textwrap

from gradguard.analysis import analyze
from gradguard.fixes import choose_fixes, fix_text_round

PPO = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Policy(nn.Module):
        def __init__(self, obs_dim, n_actions):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_actions))

        def forward(self, obs):
            return torch.distributions.Categorical(logits=self.body(obs))


    def train(policy, old_policy, optimizer, updates=10, epochs=4):
        for update in range(updates):
            obs = torch.randn(64, 4)
            dist_old = old_policy(obs)
            actions = dist_old.sample()
            old_logp = dist_old.log_prob(actions)
            advantages = torch.randn(64)
            for epoch in range(epochs):
                ratio = torch.exp(policy(obs).log_prob(actions) - old_logp)
                clipped = torch.clamp(ratio, 0.8, 1.2)
                loss = -torch.min(ratio * advantages, clipped * advantages).mean()
                optimizer.zero_grad()
                loss.backward(retain_graph=True)
                optimizer.step()
            old_policy.load_state_dict(policy.state_dict())


    policy, old_policy = Policy(4, 2), Policy(4, 2)
    train(policy, old_policy, torch.optim.Adam(policy.parameters(), lr=3e-4))
    """)

JACOBIAN = textwrap.dedent("""\
    import torch
    import torch.nn as nn

    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3))
    x = torch.randn(5, 8, requires_grad=True)
    out = model(x)
    rows = []
    for k in range(out.shape[1]):
        x.grad = None
        out[:, k].sum().backward(retain_graph=True)
        rows.append(x.grad.clone())
    print(torch.stack(rows).shape)
    """)


def _rows(source: str) -> list[tuple[str, str]]:
    lines = source.splitlines()
    return [(d.code, lines[d.span.start.row - 1].strip()) for d in analyze(source)]


def test_a_retaining_backward_that_goes_through_a_rollout_graph_again_after_a_step_is_found() -> None:
    found = analyze(PPO)
    assert _rows(PPO) == [("GG006", "loss.backward(retain_graph=True)")]
    assert "`old_logp`" in found[0].message and "retain_graph=True" in found[0].message


def test_its_fix_builds_the_rollout_value_without_a_graph_and_retains_nothing() -> None:
    fixed, _ = fix_text_round(PPO, choose_fixes(analyze(PPO), unsafe=True))
    assert "old_logp = dist_old.log_prob(actions).detach()" in fixed
    assert "loss.backward()" in fixed and "retain_graph" not in fixed
    assert _rows(fixed) == []


def test_a_retaining_loop_that_steps_no_optimizer_is_intended() -> None:
    assert _rows(JACOBIAN) == []
