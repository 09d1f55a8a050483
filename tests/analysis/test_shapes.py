"""Short training programs in the shapes real bug reports take (and the correct shapes that look
like them), each with the finding the analyzer must give: the rule, the line and the carrier."""

from __future__ import annotations

import textwrap

import pytest

from gradguard.analysis import analyze

HEADER = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
"""

BUGGY = {
    "seq2seq-decoder-state-per-step": ("""
        enc = nn.GRU(8, 16)
        dec = nn.GRUCell(8, 16)
        head = nn.Linear(16, 8)
        opt = torch.optim.Adam(list(enc.parameters()) + list(dec.parameters()), lr=1e-3)
        for x, y in loader:
            enc_out, h = enc(x)
            h = h[0]
            inp = x[0]
            for t in range(5):
                h = dec(inp, h)
                pred = head(h)
                loss = F.mse_loss(pred, y[t])
                opt.zero_grad()
                loss.backward()  # GG003 h
                opt.step()
                inp = pred
        """),
    "loss-list-never-cleared": ("""
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        losses = []
        for epoch in range(3):
            for x, y in loader:
                losses.append(F.mse_loss(model(x), y))
            opt.zero_grad()
            torch.stack(losses).mean().backward()  # GG003 losses
            opt.step()
        """),
    "retain-graph-pasted-in-loop": ("""
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in loader:
            loss = F.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward(retain_graph=True)  # GG009 loss.backward()
            opt.step()
        """),
    "accelerate-backward-twice": ("""
        from accelerate import Accelerator
        accelerator = Accelerator()
        model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
        for batch in loader:
            outputs = model(**batch)
            loss = outputs.loss
            accelerator.backward(loss)
            accelerator.backward(loss)  # GG001 loss
            optimizer.step()
        """),
    "hidden-from-init-hidden-in-function": ("""
        def train(model, loader, optimizer, criterion):
            model.train()
            hidden = model.init_hidden(32)
            for x, y in loader:
                optimizer.zero_grad()
                output, hidden = model(x, hidden)
                loss = criterion(output, y)
                loss.backward()  # GG003 hidden
                optimizer.step()
        """),
    "pinn-derivative-without-create-graph": ("""
        net = nn.Sequential(nn.Linear(1, 20), nn.Tanh(), nn.Linear(20, 1))
        opt = torch.optim.Adam(net.parameters())
        x = torch.linspace(0, 1, 50).reshape(-1, 1).requires_grad_(True)
        for it in range(100):
            u = net(x)
            du = torch.autograd.grad(u, x, torch.ones_like(u))[0]
            loss = ((du - u) ** 2).mean()
            opt.zero_grad()
            loss.backward()  # GG007 u
            opt.step()
        """),
    "lstm-state-on-module-moved-to-device": ("""
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.gru = nn.GRU(4, 8, batch_first=True)
                self.fc = nn.Linear(8, 1)
                self.h = None

            def forward(self, x):
                out, self.h = self.gru(x, self.h)
                return self.fc(out[:, -1])

        model = Net().to("cpu")
        model.train()
        opt = torch.optim.Adam(model.parameters())
        for x, y in loader:
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()  # GG003 self.h
            opt.step()
        """),
    "lstm-state-on-module": ("""
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(4, 8, batch_first=True)
                self.fc = nn.Linear(8, 1)
                self.hidden = None

            def forward(self, x):
                out, self.hidden = self.lstm(x, self.hidden)
                return self.fc(out[:, -1])

        model = Net()
        opt = torch.optim.Adam(model.parameters())
        for x, y in loader:
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()  # GG003 self.hidden
            opt.step()
        """),
    "embedding-table-before-loop": ("""
        encoder = nn.Linear(16, 8)
        items = torch.randn(100, 16)
        item_emb = encoder(items)
        opt = torch.optim.Adam(encoder.parameters())
        for users, targets in loader:
            scores = users @ item_emb.T
            loss = F.cross_entropy(scores, targets)
            opt.zero_grad()
            loss.backward()  # GG006 item_emb
            opt.step()
        """),
    "gan-generator-step-reuses-fake": ("""
        G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
        D = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
        opt_g = torch.optim.Adam(G.parameters())
        opt_d = torch.optim.Adam(D.parameters())
        for real in loader:
            fake = G(torch.randn(32, 4))
            d_loss = F.softplus(-D(real)).mean() + F.softplus(D(fake)).mean()
            opt_d.zero_grad()
            d_loss.backward()
            opt_d.step()
            g_loss = F.softplus(-D(fake)).mean()
            opt_g.zero_grad()
            g_loss.backward()  # GG005 fake
            opt_g.step()
        """),
    "two-heads-two-backwards": ("""
        trunk = nn.Linear(8, 16)
        head_a, head_b = nn.Linear(16, 1), nn.Linear(16, 1)
        opt = torch.optim.SGD(list(trunk.parameters()) + list(head_a.parameters()), lr=0.1)
        for x, ya, yb in loader:
            feats = torch.relu(trunk(x))
            loss_a = F.mse_loss(head_a(feats), ya)
            loss_b = F.mse_loss(head_b(feats), yb)
            opt.zero_grad()
            loss_a.backward()
            loss_b.backward()  # GG002 feats
            opt.step()
        """),
    "running-loss-tensor-for-logging": ("""
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        running = 0.0
        for x, y in loader:
            loss = F.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            running += loss  # GG010 running
        print(running / len(loader))
        """),
}

CLEAN = {
    "repackage-hidden": """
        def repackage_hidden(h):
            if isinstance(h, torch.Tensor):
                return h.detach()
            return tuple(repackage_hidden(v) for v in h)

        def train(model, loader, optimizer, criterion):
            hidden = model.init_hidden(32)
            for x, y in loader:
                hidden = repackage_hidden(hidden)
                optimizer.zero_grad()
                output, hidden = model(x, hidden)
                loss = criterion(output, y)
                loss.backward()
                optimizer.step()
        """,
    "epoch-loss-reset-each-epoch": """
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(3):
            epoch_loss = 0
            for x, y in loader:
                epoch_loss += F.mse_loss(model(x), y)
            opt.zero_grad()
            epoch_loss.backward()
            opt.step()
        """,
    "input-moved-after-requires-grad": """
        x = torch.randn(10, 3, requires_grad=True)
        x = x.to("cpu")
        model = nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for i in range(5):
            loss = model(x).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    "hidden-detach-in-place": """
        rnn = nn.GRU(4, 8)
        opt = torch.optim.SGD(rnn.parameters(), lr=0.1)
        h = torch.zeros(1, 2, 8)
        for x in loader:
            out, h = rnn(x, h)
            loss = out.pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            h.detach_()
        """,
    "backward-in-each-branch": """
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step, (x, y) in enumerate(loader):
            loss = F.mse_loss(model(x), y)
            if step % 2 == 0:
                loss.backward()
            else:
                (loss * 0.5).backward()
            opt.step()
        """,
    "teacher-targets-under-no-grad": """
        teacher, student = nn.Linear(4, 3), nn.Linear(4, 3)
        data = torch.randn(64, 4)
        with torch.no_grad():
            soft = F.softmax(teacher(data), dim=-1)
        opt = torch.optim.SGD(student.parameters(), lr=0.1)
        for epoch in range(3):
            loss = F.kl_div(F.log_softmax(student(data), dim=-1), soft, reduction="batchmean")
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    "gradient-accumulation-done-right": """
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for i, (x, y) in enumerate(loader):
            loss = F.mse_loss(model(x), y) / 4
            loss.backward()
            if (i + 1) % 4 == 0:
                opt.step()
                opt.zero_grad()
        """,
    "time-steps-summed-then-one-backward": """
        cell = nn.LSTMCell(4, 8)
        head = nn.Linear(8, 1)
        opt = torch.optim.Adam(list(cell.parameters()) + list(head.parameters()))
        for xs, ys in loader:
            h = torch.zeros(2, 8)
            c = torch.zeros(2, 8)
            loss = 0
            for t in range(xs.size(0)):
                h, c = cell(xs[t], (h, c))
                loss += F.mse_loss(head(h), ys[t])
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    "grad-with-retain-then-backward": """
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in loader:
            loss = F.mse_loss(model(x), y)
            grads = torch.autograd.grad(loss, list(model.parameters()), retain_graph=True)
            norm = sum(g.norm() for g in grads)
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    "retain-graph-needed-by-second-loss": """
        trunk = nn.Linear(8, 16)
        head_a, head_b = nn.Linear(16, 1), nn.Linear(16, 1)
        opt = torch.optim.SGD(trunk.parameters(), lr=0.1)
        for x, ya, yb in loader:
            feats = trunk(x)
            opt.zero_grad()
            F.mse_loss(head_a(feats), ya).backward(retain_graph=True)
            F.mse_loss(head_b(feats), yb).backward()
            opt.step()
        """,
    "retained-graph-backwarded-in-a-loop": """
        w = torch.randn(3, requires_grad=True)
        loss = (w.exp() * 2).sum()
        for i in range(3):
            loss.backward(retain_graph=True)
        """,
    "predictions-detached-for-metrics": """
        model = nn.Linear(4, 3)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        preds, losses = [], []
        for x, y in loader:
            out = model(x)
            loss = F.cross_entropy(out, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            preds.append(out.detach())
            losses.append(loss.item())
        """,
}


def _program(body: str) -> str:
    return HEADER + textwrap.dedent(body)


def _expected(source: str) -> list[tuple[int, str, str]]:
    marks = []
    for row, line in enumerate(source.splitlines(), start=1):
        if "  # GG" in line:
            code, carrier = line.split("  # ", 1)[1].split()
            marks.append((row, code, carrier))
    return marks


@pytest.mark.parametrize("name", sorted(BUGGY))
def test_buggy_shape_is_flagged_with_its_carrier(name: str) -> None:
    source = _program(BUGGY[name])
    expected = _expected(source)
    found = analyze(source)
    assert [(d.span.start.row, d.code) for d in found] == [(row, code) for row, code, _ in expected]
    for diagnostic, (_, _, carrier) in zip(found, expected):
        assert f"`{carrier}`" in diagnostic.message


@pytest.mark.parametrize("name", sorted(CLEAN))
def test_correct_shape_is_not_flagged(name: str) -> None:
    assert analyze(_program(CLEAN[name])) == ()


def test_transformers_trainer_compute_loss_with_manual_backward() -> None:
    source = textwrap.dedent("""\
        from transformers import Trainer
        import torch.nn.functional as F

        class WeightedTrainer(Trainer):
            def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
                labels = inputs.pop("labels")
                outputs = model(**inputs)
                loss = F.cross_entropy(outputs.logits, labels, weight=self.class_weights)
                loss.backward()
                return (loss, outputs) if return_outputs else loss
        """)
    (finding,) = analyze(source)
    assert (finding.code, finding.span.start.row) == ("GG008", 9)
    assert finding.message.startswith("The transformers Trainer already backward-s what `compute_loss` returns")


def test_actor_critic_with_two_optimizers_is_not_called_a_gan() -> None:
    source = _program("""
        trunk = nn.Linear(8, 16)
        actor, critic = nn.Linear(16, 2), nn.Linear(16, 1)
        actor_opt = torch.optim.Adam(actor.parameters())
        critic_opt = torch.optim.Adam(critic.parameters())
        for obs, ret in loader:
            feats = torch.relu(trunk(obs))
            actor_loss = -F.log_softmax(actor(feats), -1).mean()
            critic_loss = F.mse_loss(critic(feats), ret)
            actor_opt.zero_grad()
            actor_loss.backward()
            actor_opt.step()
            critic_opt.zero_grad()
            critic_loss.backward()
            critic_opt.step()
        """)
    (finding,) = analyze(source)
    assert finding.code == "GG002" and "`feats`" in finding.message
