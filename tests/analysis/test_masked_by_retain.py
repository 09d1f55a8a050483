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


KERAS_LIKE = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class BaseModel(nn.Module):
        def __init__(self, dims, weight_decay=1e-5):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(dims, 16), nn.ReLU(), nn.Linear(16, 1))
            self.reg_loss = torch.zeros((1,))
            self.add_regularization_loss(self.net.parameters(), weight_decay)

        def add_regularization_loss(self, weights, weight_decay):
            reg = torch.zeros((1,))
            for w in weights:
                reg = reg + torch.norm(w, p=2)
            self.reg_loss = self.reg_loss + weight_decay * reg

        def forward(self, x):
            return self.net(x).squeeze(-1)

        def compile(self, lr=1e-3):
            self.optim = torch.optim.Adam(self.parameters(), lr=lr)

        def fit(self, batches, epochs=2):
            optim = self.optim
            for epoch in range(epochs):
                for x, y in batches:
                    optim.zero_grad()
                    loss = F.binary_cross_entropy_with_logits(self(x), y)
                    total_loss = loss + self.reg_loss
                    total_loss.backward({retain})
                    optim.step()
    """)


def test_an_attribute_set_in_another_method_is_not_taken_for_a_parameter() -> None:
    """`self.optim` set in `compile()`, read in `fit()`: an optimizer of unknown modules (it is
    stepped after `zero_grad()`), so the regularisation term built in `__init__` and kept alive by
    `retain_graph=True` is found, with both fixes in words (it may need to follow the weights)."""
    buggy = KERAS_LIKE.format(retain="retain_graph=True")
    found = analyze(buggy)
    assert _rows(buggy) == [("GG006", "total_loss.backward(retain_graph=True)")]
    assert found[0].fix is None and "inside the loop" in found[0].message
