"""Small, realistic training loops that hit autograd's errors, for the runtime monitor's tests.

Markers in comments say what the diagnosis must point at: `# <fails>` the failing call,
`# <frees>` the earlier call that freed the graph, `# <assigns>` the carrier's last assignment,
`# <inplace>` the in-place modification. Tests find the lines with `marked_line`.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd import grad as autograd_grad


def marked_line(marker: str) -> int:
    """The line of this file carrying `# <marker>` (exactly one)."""
    with open(__file__, encoding="utf-8") as handle:
        rows = [i for i, line in enumerate(handle, start=1) if line.rstrip().endswith(f"# <{marker}>")]
    assert len(rows) == 1, (marker, rows)
    return rows[0]


def marked_lines(marker: str) -> list[int]:
    """Every line of this file ending with `# <marker>`."""
    with open(__file__, encoding="utf-8") as handle:
        return [i for i, line in enumerate(handle, start=1) if line.rstrip().endswith(f"# <{marker}>")]


class CharRNN(nn.Module):
    """An RNN cell that keeps its hidden state on the module between calls (`self.h`)."""

    def __init__(self, vocab: int = 6, hidden: int = 8) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.w_ih = nn.Linear(hidden, hidden)
        self.w_hh = nn.Linear(hidden, hidden, bias=False)
        self.head = nn.Linear(hidden, vocab)
        self.h = torch.zeros(1, hidden)

    def forward(self, token: torch.Tensor) -> torch.Tensor:
        self.h = torch.tanh(self.w_ih(self.embed(token)) + self.w_hh(self.h))  # <h-assigns>
        return self.head(self.h)


def rnn_hidden_not_detached(steps: int = 3) -> None:
    """Truncated BPTT without detaching the hidden state between chunks."""
    rnn = nn.RNN(4, 8, batch_first=True)
    head = nn.Linear(8, 3)
    opt = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)
    hidden = torch.zeros(1, 2, 8)
    for _ in range(steps):
        x = torch.randn(2, 5, 4)
        y = torch.randint(0, 3, (2,))
        out, hidden = rnn(x, hidden)  # <rnn-assigns>
        loss = F.cross_entropy(head(out[:, -1]), y)
        opt.zero_grad()
        loss.backward()  # <rnn-fails>
        opt.step()


def lstm_tuple_state(steps: int = 3) -> None:
    """nn.LSTM with its (h, c) tuple carried across batches."""
    lstm = nn.LSTM(3, 5)
    opt = torch.optim.Adam(lstm.parameters(), lr=1e-3)
    state = (torch.zeros(1, 1, 5), torch.zeros(1, 1, 5))
    for _ in range(steps):
        seq = torch.randn(4, 1, 3)
        output, state = lstm(seq, state)  # <lstm-assigns>
        loss = output.pow(2).mean()
        opt.zero_grad()
        loss.backward()  # <lstm-fails>
        opt.step()


def module_state(steps: int = 3) -> None:
    """`self.h` kept on the module across calls."""
    model = CharRNN()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        token = torch.randint(0, 6, (1,))
        target = torch.randint(0, 6, (1,))
        loss = F.cross_entropy(model(token), target)
        opt.zero_grad()
        loss.backward()  # <h-fails>
        opt.step()


def gan_fake_not_detached(steps: int = 2) -> None:
    """The discriminator step uses the generator's output without .detach()."""
    gen = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    disc = nn.Sequential(nn.Linear(2, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
    opt_g = torch.optim.Adam(gen.parameters(), lr=1e-3)
    opt_d = torch.optim.Adam(disc.parameters(), lr=1e-3)
    for _ in range(steps):
        real = torch.randn(8, 2)
        z = torch.randn(8, 4)
        fake = gen(z)  # <gan-assigns>
        opt_d.zero_grad()
        d_loss = F.softplus(-disc(real)).mean() + F.softplus(disc(fake)).mean()
        d_loss.backward()  # <gan-frees>
        opt_d.step()
        opt_g.zero_grad()
        g_loss = F.softplus(-disc(fake)).mean()
        g_loss.backward()  # <gan-fails>
        opt_g.step()


def accumulated_loss(steps: int = 3) -> None:
    """A running total of loss tensors that is backpropagated every step."""
    model = nn.Linear(5, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    total_loss = 0.0
    for _ in range(steps):
        x, y = torch.randn(4, 5), torch.randn(4, 1)
        loss = F.mse_loss(model(x), y)
        total_loss += loss  # <acc-assigns>
        opt.zero_grad()
        total_loss.backward()  # <acc-fails>
        opt.step()


def two_heads(steps: int = 1) -> None:
    """A shared trunk with two heads, one backward per loss."""
    trunk = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
    cls_head, reg_head = nn.Linear(16, 3), nn.Linear(16, 1)
    params = [*trunk.parameters(), *cls_head.parameters(), *reg_head.parameters()]
    opt = torch.optim.SGD(params, lr=0.1)
    for _ in range(steps):
        x = torch.randn(4, 6)
        features = trunk(x)  # <heads-assigns>
        cls_loss = F.cross_entropy(cls_head(features), torch.randint(0, 3, (4,)))
        reg_loss = F.mse_loss(reg_head(features), torch.randn(4, 1))
        opt.zero_grad()
        cls_loss.backward()  # <heads-frees>
        reg_loss.backward()  # <heads-fails>
        opt.step()


def weight_outside_loop(steps: int = 3) -> None:
    """A masked weight computed once before the loop and used in every step."""
    weight = nn.Parameter(torch.randn(5, 3))
    mask = (torch.rand(5, 3) > 0.3).float()
    opt = torch.optim.SGD([weight], lr=0.1)
    masked = weight * mask  # <outside-assigns>
    for _ in range(steps):
        x, y = torch.randn(4, 5), torch.randn(4, 3)
        loss = F.mse_loss(x @ masked, y)
        opt.zero_grad()
        loss.backward()  # <outside-fails>
        opt.step()


def grad_then_backward() -> None:
    """A gradient penalty computed with grad (imported before install) without create_graph."""
    critic = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    x = torch.randn(6, 3, requires_grad=True)
    score = critic(x).sum()
    (gx,) = autograd_grad(score, x)  # <grad-frees>
    penalty = (gx.norm(dim=1) - 1).pow(2).mean()
    loss = -score + 10 * penalty
    loss.backward()  # <grad-fails>


def same_loss_twice() -> None:
    """The same loss backpropagated twice."""
    model = nn.Linear(3, 1)
    loss = model(torch.randn(2, 3)).pow(2).mean()  # <twice-assigns>
    loss.backward()  # <twice-frees>
    loss.backward()  # <twice-fails>


def inplace_after_save() -> None:
    """An activation modified in place after sigmoid saved it."""
    layer = nn.Linear(4, 4)
    x = torch.randn(2, 4)
    probs = torch.sigmoid(layer(x))  # <inplace-assigns>
    scaled = probs * 3
    probs.mul_(2)  # <inplace>
    scaled.sum().backward()  # <inplace-fails>


def checkpointed_rnn(reentrant: bool, steps: int = 3) -> None:
    """An RNN cell under torch.utils.checkpoint with the hidden state not detached."""
    from torch.utils.checkpoint import checkpoint

    cell = nn.GRUCell(3, 6)
    opt = torch.optim.SGD(cell.parameters(), lr=0.1)
    h = torch.zeros(2, 6, requires_grad=True)
    for _ in range(steps):
        x = torch.randn(2, 3, requires_grad=True)
        h = checkpoint(cell, x, h, use_reentrant=reentrant)  # <ckpt-assigns>
        loss = h.pow(2).sum()
        opt.zero_grad()
        loss.backward()  # <ckpt-fails>
        opt.step()


def lbfgs_closure_outside(steps: int = 2) -> None:
    """LBFGS with a closure that returns a loss computed outside it."""
    model = nn.Linear(3, 1)
    opt = torch.optim.LBFGS(model.parameters(), max_iter=3)
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    loss = F.mse_loss(model(x), y)  # <lbfgs-assigns>

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss.backward()  # <lbfgs-fails>
        return loss

    for _ in range(steps):
        opt.step(closure)


def grad_scaler_rnn(steps: int = 3) -> None:
    """GradScaler (CPU) around a loop whose hidden state is not detached."""
    cell = nn.RNNCell(3, 5)
    opt = torch.optim.SGD(cell.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    h = torch.zeros(2, 5)
    for _ in range(steps):
        h = cell(torch.randn(2, 3), h)  # <scaler-assigns>
        loss = h.pow(2).mean()
        opt.zero_grad()
        scaler.scale(loss).backward()  # <scaler-fails>
        scaler.step(opt)
        scaler.update()


def clean_loop(steps: int = 3) -> float:
    """A correct loop (hidden detached): must run without any output from gradguard."""
    cell = nn.GRUCell(3, 4)
    opt = torch.optim.SGD(cell.parameters(), lr=0.1)
    h = torch.zeros(2, 4)
    total = 0.0
    for _ in range(steps):
        h = cell(torch.randn(2, 3), h.detach())
        loss = h.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    return total


def _head_a_step(head: nn.Module, features: torch.Tensor, target: torch.Tensor) -> None:
    loss_a = F.cross_entropy(head(features), target)
    loss_a.backward()  # <shared-frees>


def shared_trunk_first_loss_gone() -> None:
    """Both heads run before the first backward, whose loss lives only inside a helper."""
    trunk = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
    head_a, head_b = nn.Linear(16, 3), nn.Linear(16, 1)
    x = torch.randn(4, 6)
    features = trunk(x)  # <shared-assigns>
    out_b = head_b(features)
    loss_b = F.mse_loss(out_b, torch.randn(4, 1))
    _head_a_step(head_a, features, torch.randint(0, 3, (4,)))
    loss_b.backward()  # <shared-fails>


class _TDLearner:
    """One-step actor-critic: the critic steps first, then the policy weighs its log-probabilities by
    the critic's estimate (its optimizer given both modules' parameters when `one_optimizer`)."""

    def __init__(self, one_optimizer: bool) -> None:
        self.policy, self.critic = nn.Linear(5, 3), nn.Linear(5, 1)
        if one_optimizer:
            self.policy_opt = self.critic_opt = torch.optim.SGD([*self.policy.parameters(),
                                                                 *self.critic.parameters()], lr=0.05)
        else:
            self.policy_opt = torch.optim.SGD(self.policy.parameters(), lr=0.05)
            self.critic_opt = torch.optim.SGD(self.critic.parameters(), lr=0.1)

    def update(self, obs: torch.Tensor, reward: torch.Tensor) -> None:
        dist = torch.distributions.Categorical(logits=self.policy(obs))
        action = dist.sample()
        estimate = self.critic(obs).squeeze(-1)  # <td-assigns>
        critic_loss = (reward - estimate).pow(2).mean()
        self.critic_opt.zero_grad()
        critic_loss.backward()  # <td-frees>
        self.critic_opt.step()
        policy_loss = -(dist.log_prob(action) * (reward - estimate)).mean()
        self.policy_opt.zero_grad()
        policy_loss.backward()  # <td-fails>
        self.policy_opt.step()


def td_actor_critic(one_optimizer: bool = False) -> None:
    learner = _TDLearner(one_optimizer)
    learner.update(torch.randn(8, 5), torch.randn(8))
