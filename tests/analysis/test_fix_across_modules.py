"""Fixes whose edit belongs in another module than the one linted, or whose names must be bound where
they land (issue 10): state a model object keeps between calls, detached in the training loop of a
third module through that loop's own name for the object (a parameter, a trainer's attribute); a
tuple state carried by a `while` loop whose truncation forgets one part; the value a generator loss
reads from a discriminator stepped in between, recomputed where the loss helper of another module
would not see it; a table a trainer's constructor computed from its `model` parameter, recomputed
where only `self.model` is bound. Each program is fixed with `gradguard lint --fix --unsafe-fixes`
and run under torch beside its hand-fixed twin: it must print what the hand fix prints."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from fixture_support import run_source_many

from gradguard.analysis import analyze
from gradguard.fixes import choose_fixes, fix_text_round

TAGGER_MODEL = textwrap.dedent('''\
    """A GRU tagger that keeps its recurrent memory between calls (streaming inference style)."""
    import torch
    import torch.nn as nn


    class StreamingTagger(nn.Module):
        def __init__(self, vocab=20, width=12, tags=4):
            super().__init__()
            self.embed = nn.Embedding(vocab, width)
            self.gru = nn.GRU(width, width)
            self.out = nn.Linear(width, tags)
            self.width = width
            self.memory = None

        def reset_memory(self, batch):
            self.memory = torch.zeros(1, batch, self.width)

        def forward(self, tokens):
            hidden, self.memory = self.gru(self.embed(tokens), self.memory)
            return self.out(hidden)
    ''')

TAGGER_LOOP = textwrap.dedent('''\
    """The epoch loop, written against any model with `reset_memory`."""
    import torch.nn.functional as F


    def run_epoch(net, stream, opt, chunk=5):
        net.reset_memory(stream.size(1))
        total = 0.0
        for start in range(0, stream.size(0) - chunk, chunk):
            tokens = stream[start:start + chunk]
            tags = tokens % 4
            opt.zero_grad()
            scores = net(tokens)
            loss = F.cross_entropy(scores.reshape(-1, 4), tags.reshape(-1))
            loss.backward()
            opt.step()
            total += loss.item()
        return total
    ''')

TAGGER_TRAINER = textwrap.dedent('''\
    """A trainer object holding the model and its optimizer."""
    import torch
    import torch.nn.functional as F


    class Trainer:
        def __init__(self, net, lr=0.1):
            self.net = net
            self.opt = torch.optim.SGD(net.parameters(), lr=lr)

        def fit(self, stream, chunk=5):
            self.net.reset_memory(stream.size(1))
            total = 0.0
            start = 0
            while start + chunk < stream.size(0):
                tokens = stream[start:start + chunk]
                self.opt.zero_grad()
                scores = self.net(tokens)
                loss = F.cross_entropy(scores.reshape(-1, 4), (tokens % 4).reshape(-1))
                loss.backward()
                self.opt.step()
                total += loss.item()
                start += chunk
            return total
    ''')

TAGGER_SCRIPT = textwrap.dedent('''\
    import torch

    from tagger.loop import run_epoch
    from tagger.model import StreamingTagger

    torch.manual_seed(0)
    stream = torch.randint(0, 20, (31, 3))
    model = StreamingTagger()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        total = run_epoch(model, stream, optimizer)
    print(f"{total:.5f}")
    ''')

TRAINER_SCRIPT = textwrap.dedent('''\
    import torch

    from tagger.model import StreamingTagger
    from tagger.trainer import Trainer

    torch.manual_seed(0)
    stream = torch.randint(0, 20, (31, 3))
    trainer = Trainer(StreamingTagger())
    for epoch in range(2):
        total = trainer.fit(stream)
    print(f"{total:.5f}")
    ''')


def _project(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _fix_project(root: Path) -> None:
    subprocess.run([sys.executable, "-m", "gradguard", "lint", "--no-cache", "--fix", "--unsafe-fixes", "."],
                   cwd=root, capture_output=True, text=True, timeout=300, check=False)


def _prelude(root: Path, modules: list[str]) -> str:
    """Code that installs the project's modules (as fixed on disk) before a script runs."""
    lines = ["import sys, types"]
    for dotted in modules:
        text = (root / (dotted.replace(".", "/") + ".py")).read_text(encoding="utf-8")
        lines += [f"_m = types.ModuleType({dotted!r})", f"exec({text!r}, _m.__dict__)", f"sys.modules[{dotted!r}] = _m"]
    lines += ["_p = types.ModuleType('tagger')", "_p.__path__ = []", "sys.modules['tagger'] = _p"]
    return "\n".join(lines) + "\n"


def test_state_kept_on_a_model_is_detached_in_the_loop_of_another_module_through_its_parameter(tmp_path: Path) -> None:
    files = {"tagger/__init__.py": "", "tagger/model.py": TAGGER_MODEL, "tagger/loop.py": TAGGER_LOOP,
             "train.py": TAGGER_SCRIPT}
    _project(tmp_path, files)
    found = analyze(TAGGER_SCRIPT, path=str(tmp_path / "train.py"))
    assert [d.code for d in found] == ["GG003"]
    _fix_project(tmp_path)
    loop = (tmp_path / "tagger/loop.py").read_text(encoding="utf-8")
    # Before the call that reads it, in the loop that carries it, named as that loop names the model.
    assert loop.index("net.memory = net.memory.detach()") < loop.index("scores = net(tokens)")
    assert (tmp_path / "tagger/model.py").read_text(encoding="utf-8") == TAGGER_MODEL
    hand = TAGGER_LOOP.replace("        opt.zero_grad()\n", "        net.memory = net.memory.detach()\n"
                                                           "        opt.zero_grad()\n")
    assert hand != TAGGER_LOOP
    fixed_run = _prelude(tmp_path, ["tagger.model", "tagger.loop"]) + TAGGER_SCRIPT
    (tmp_path / "tagger/loop.py").write_text(hand, encoding="utf-8")
    runs = run_source_many({"fixed.py": fixed_run,
                            "hand.py": _prelude(tmp_path, ["tagger.model", "tagger.loop"]) + TAGGER_SCRIPT})
    assert runs["fixed.py"].error_type is None, runs["fixed.py"].stderr
    assert runs["fixed.py"].stdout == runs["hand.py"].stdout


def test_state_kept_on_a_model_a_trainer_holds_is_detached_through_the_trainer_s_attribute(tmp_path: Path) -> None:
    files = {"tagger/__init__.py": "", "tagger/model.py": TAGGER_MODEL, "tagger/trainer.py": TAGGER_TRAINER,
             "train.py": TRAINER_SCRIPT}
    _project(tmp_path, files)
    found = analyze(TRAINER_SCRIPT, path=str(tmp_path / "train.py"))
    assert [d.code for d in found] == ["GG003"]
    _fix_project(tmp_path)
    trainer = (tmp_path / "tagger/trainer.py").read_text(encoding="utf-8")
    assert "self.net.memory = self.net.memory.detach()" in trainer
    hand = TAGGER_TRAINER.replace("            self.opt.zero_grad()\n",
                                  "            self.net.memory = self.net.memory.detach()\n"
                                  "            self.opt.zero_grad()\n")
    assert hand != TAGGER_TRAINER
    modules = ["tagger.model", "tagger.trainer"]
    fixed_run = _prelude(tmp_path, modules) + TRAINER_SCRIPT
    (tmp_path / "tagger/trainer.py").write_text(hand, encoding="utf-8")
    runs = run_source_many({"fixed.py": fixed_run, "hand.py": _prelude(tmp_path, modules) + TRAINER_SCRIPT})
    assert runs["fixed.py"].error_type is None, runs["fixed.py"].stderr
    assert runs["fixed.py"].stdout == runs["hand.py"].stdout


ADAPTIVE_NEURON = textwrap.dedent('''\
    """An adaptive spiking neuron trained on a long stream, chunk by chunk (truncated BPTT)."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class AdaptiveCell(nn.Module):
        def __init__(self, n_in=6, n_hidden=10, decay=0.8, adapt=0.9):
            super().__init__()
            self.fc = nn.Linear(n_in, n_hidden)
            self.decay, self.adapt = decay, adapt

        def forward(self, x, state):
            potential, threshold = state
            potential = self.decay * potential + self.fc(x)
            fired = torch.sigmoid(4.0 * (potential - threshold))
            threshold = self.adapt * threshold + 0.1 * fired
            return fired, (potential - fired, threshold)


    def main():
        torch.manual_seed(1)
        cell, readout = AdaptiveCell(), nn.Linear(10, 2)
        opt = torch.optim.Adam([*cell.parameters(), *readout.parameters()], lr=0.01)
        stream = torch.randn(40, 3, 6)
        labels = (stream[..., 0] > 0).long()
        state = (torch.zeros(3, 10), torch.full((3, 10), 0.5))
        t, chunk, losses = 0, 8, []
        while t < stream.size(0):
            logits = []
            for k in range(t, min(t + chunk, stream.size(0))):
                fired, state = cell(stream[k], state)
                logits.append(readout(fired))
            loss = F.cross_entropy(torch.stack(logits).flatten(0, 1), labels[t:t + len(logits)].flatten())
            opt.zero_grad()
            loss.backward()
            opt.step()
            potential, threshold = state
            state = (potential.detach(), threshold)
            losses.append(loss.item())
            t += chunk
        print(f"{sum(losses):.5f}")


    if __name__ == "__main__":
        main()
    ''')


def test_a_tuple_state_one_part_of_which_the_truncation_forgets_is_detached_whole_where_the_loop_reads_it(
        single_runs: dict) -> None:
    found = analyze(ADAPTIVE_NEURON)
    assert [d.code for d in found] == ["GG003"]
    fixed, _ = fix_text_round(ADAPTIVE_NEURON, choose_fixes(found, unsafe=True))
    assert fixed.index("state = tuple(h.detach() for h in state)") < fixed.index("for k in range(t")
    _same_training(single_runs, "adaptive")


CRITIC_LOSS = textwrap.dedent('''\
    import torch
    import torch.nn as nn


    class EnhancerLoss(nn.Module):
        """Pixel loss plus a small adversarial term on the critic's mean score."""

        def __init__(self, weight=0.01):
            super().__init__()
            self.pixel = nn.L1Loss()
            self.weight = weight

        def forward(self, critic_score, restored, clean):
            adversarial = -critic_score
            return self.pixel(restored, clean) + self.weight * adversarial
    ''')

ENHANCER = textwrap.dedent('''\
    """Image enhancement with a critic: the critic's step comes first, then the enhancer's."""
    import torch
    import torch.nn as nn

    from losses import EnhancerLoss

    torch.manual_seed(5)
    enhancer = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 3, padding=1))
    critic = nn.Sequential(nn.Conv2d(1, 4, 3, stride=2), nn.ReLU(), nn.Flatten(), nn.LazyLinear(1))
    critic(torch.zeros(1, 1, 8, 8))
    opt_e = torch.optim.Adam(enhancer.parameters(), lr=1e-3)
    opt_c = torch.optim.Adam(critic.parameters(), lr=1e-3)
    criterion = EnhancerLoss()
    for step in range(6):
        clean = torch.rand(4, 1, 8, 8)
        noisy = clean + 0.1 * torch.randn_like(clean)
        restored = enhancer(noisy)
        critic.zero_grad()
        score_real = critic(clean).mean()
        score_fake = critic(restored).mean()
        c_loss = score_fake - score_real
        c_loss.backward(retain_graph=True)
        opt_c.step()
        enhancer.zero_grad()
        e_loss = criterion(score_fake, restored, clean)
        e_loss.backward()
        opt_e.step()
    print(f"{e_loss.item():.5f} {c_loss.item():.5f}")
    ''')


def test_a_score_a_loss_helper_of_another_module_reads_after_the_critic_s_step_is_computed_again(
        tmp_path: Path, single_runs: dict) -> None:
    # The message and the fix name what the training script holds (`score_fake`), not the helper's
    # own local made from it.
    (tmp_path / "losses.py").write_text(CRITIC_LOSS, encoding="utf-8")
    path = tmp_path / "train.py"
    path.write_text(ENHANCER, encoding="utf-8")
    found = analyze(ENHANCER, path=str(path))
    assert [d.code for d in found] == ["GG011"]
    assert "`score_fake`" in found[0].message and "adversarial" not in found[0].message
    fixed, _ = fix_text_round(ENHANCER, choose_fixes(found, unsafe=True))
    step = fixed.index("opt_c.step()")
    assert step < fixed.index("score_fake = critic(restored).mean()", step)
    assert fixed == _fixed_enhancer()
    _same_training(single_runs, "enhancer")


PROTOTYPES = textwrap.dedent('''\
    """Prototype classification: each class's prototype is the normalised mean of a learned table."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class ProtoNet(nn.Module):
        def __init__(self, dim=8, classes=5, per_class=3):
            super().__init__()
            self.encoder = nn.Sequential(nn.Linear(dim, 16), nn.ReLU(), nn.Linear(16, 16))
            self.support = nn.Parameter(torch.randn(classes, per_class, 16))

        def prototypes(self):
            return F.normalize(self.support.mean(1), dim=-1)


    class ProtoTrainer:
        def __init__(self, net, lr=0.05, scale=10.0):
            self.net = net
            self.opt = torch.optim.SGD(net.parameters(), lr=lr)
            self.scale = scale
            self.protos = net.prototypes()

        def logits(self, x):
            return self.scale * F.normalize(self.net.encoder(x), dim=-1) @ self.protos.t()

        def step(self, x, y):
            loss = F.cross_entropy(self.logits(x), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            return loss.item()


    torch.manual_seed(3)
    trainer = ProtoTrainer(ProtoNet())
    for it in range(5):
        x = torch.randn(10, 8)
        last = trainer.step(x, (x[:, 0] > 0).long() + (x[:, 1] > 0).long())
    print(f"{last:.5f}")
    ''')


def test_a_table_a_constructor_made_from_its_parameter_is_recomputed_through_the_attribute_that_keeps_it(
        single_runs: dict) -> None:
    found = analyze(PROTOTYPES)
    assert [d.code for d in found] == ["GG006"]
    fixed, _ = fix_text_round(PROTOTYPES, choose_fixes(found, unsafe=True))
    assert "self.protos = self.net.prototypes()" in fixed
    _same_training(single_runs, "prototypes")


REPLAY = textwrap.dedent('''\
    """Q-learning on encoded observations; the buffer draws its batches through a generator of its own."""
    import random

    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Buffer:
        def __init__(self, capacity, seed):
            self.items = []
            self.capacity = capacity
            self.rng = random.Random(seed)

        def add(self, obs, action, reward, next_obs):
            if len(self.items) >= self.capacity:
                self.items.pop(0)
            self.items.append((obs, action, reward, next_obs))

        def draw(self, n):
            picked = self.rng.sample(self.items, n)
            obs, actions, rewards, next_obs = zip(*picked)
            return torch.stack(obs), torch.tensor(actions), torch.tensor(rewards), torch.stack(next_obs)


    torch.manual_seed(0)
    encoder = nn.Linear(6, 8)
    q_net = nn.Linear(8, 3)
    opt = torch.optim.Adam(q_net.parameters(), lr=1e-3)
    buffer = Buffer(100, seed=0)
    for step in range(40):
        obs = encoder(torch.randn(6))
        action = random.randrange(3)
        next_obs = encoder(torch.randn(6))
        buffer.add(obs, action, float(action == 1), next_obs)
        if len(buffer.items) >= 8:
            o, a, r, o2 = buffer.draw(8)
            target = r + 0.9 * q_net(o2).max(1).values.detach()
            loss = F.mse_loss(q_net(o).gather(1, a[:, None]).squeeze(1), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
    print(f"{loss.item():.4f}")
    ''')


def test_a_store_sampled_through_its_own_random_generator_is_kept_and_fed_without_graph() -> None:
    # `self.rng.sample(self.items, n)` of a `random.Random` picks at random as `random.sample` does (the
    # facts say so): emptying the store would change what the program trains on.
    found = analyze(REPLAY)
    assert [d.code for d in found] == ["GG003"]
    assert "samples from it" in found[0].message and "Empty" not in found[0].message


LBFGS_FIT = textwrap.dedent('''\
    """Fit a damped oscillator's parameters with LBFGS; the trajectory is simulated by a small network."""
    import torch
    import torch.nn as nn

    torch.manual_seed(2)
    t = torch.linspace(0, 4, 50).unsqueeze(-1)
    observed = torch.exp(-0.3 * t) * torch.cos(2.0 * t)
    net = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
    opt = torch.optim.LBFGS(net.parameters(), lr=0.5, max_iter=5)
    for outer in range(3):
        trajectory = net(t)
        smooth = 1e-3

        def closure():
            opt.zero_grad()
            loss = (trajectory - observed).pow(2).mean() + smooth * sum(p.pow(2).sum() for p in net.parameters())
            loss.backward()
            return loss

        loss = opt.step(closure)
    print(f"{loss.item():.6f}")
    ''')


def test_a_forward_computed_beside_an_lbfgs_closure_moves_into_it(single_runs: dict) -> None:
    # Each call of the closure builds a new loss (GG002, not a repeated root) from the one forward
    # computed outside: the fix computes the forward inside, before the loss that reads it.
    found = analyze(LBFGS_FIT)
    assert [d.code for d in found] == ["GG002"]
    fixed, _ = fix_text_round(LBFGS_FIT, choose_fixes(found, unsafe=True))
    assert fixed.index("opt.zero_grad()") < fixed.index("trajectory = net(t)") < fixed.index("loss = (trajectory")
    assert "loss.backward(retain_graph=True)" not in fixed and "+ loss" not in fixed
    _same_training(single_runs, "lbfgs")


_LOSSES_MODULE = ("import sys, types\n_m = types.ModuleType('losses')\n"
                  f"exec({CRITIC_LOSS!r}, _m.__dict__)\nsys.modules['losses'] = _m\n")


def _fixed(source: str) -> str:
    return fix_text_round(source, choose_fixes(analyze(source), unsafe=True))[0]


def _fixed_enhancer() -> str:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "losses.py").write_text(CRITIC_LOSS, encoding="utf-8")
        path = Path(folder) / "train.py"
        path.write_text(ENHANCER, encoding="utf-8")
        return fix_text_round(ENHANCER, choose_fixes(analyze(ENHANCER, path=str(path)), unsafe=True))[0]


@pytest.fixture(scope="module")
def single_runs() -> dict:
    """Every single-file program of this module fixed, and its hand-fixed twin, run in one batch."""
    hands = {
        "adaptive": ADAPTIVE_NEURON.replace("state = (potential.detach(), threshold)",
                                            "state = (potential.detach(), threshold.detach())"),
        "enhancer": _LOSSES_MODULE + ENHANCER.replace(
            "    enhancer.zero_grad()\n", "    score_fake = critic(restored).mean()\n    enhancer.zero_grad()\n"),
        "prototypes": PROTOTYPES.replace("@ self.protos.t()", "@ self.net.prototypes().t()"),
        "lbfgs": LBFGS_FIT.replace("    trajectory = net(t)\n", "").replace(
            "        opt.zero_grad()\n", "        opt.zero_grad()\n        trajectory = net(t)\n"),
    }
    fixed = {"adaptive": _fixed(ADAPTIVE_NEURON), "enhancer": _LOSSES_MODULE + _fixed_enhancer(),
             "prototypes": _fixed(PROTOTYPES), "lbfgs": _fixed(LBFGS_FIT)}
    originals = {"adaptive": ADAPTIVE_NEURON, "enhancer": _LOSSES_MODULE + ENHANCER, "prototypes": PROTOTYPES,
                 "lbfgs": LBFGS_FIT}
    assert all(hands[name] != originals[name] for name in hands)
    sources = {f"{name}_hand.py": text for name, text in hands.items()}
    sources.update({f"{name}_fixed.py": text for name, text in fixed.items()})
    return dict(run_source_many(sources))


def _same_training(runs: dict, name: str) -> None:
    fixed, hand = runs[f"{name}_fixed.py"], runs[f"{name}_hand.py"]
    assert fixed.error_type is None, fixed.stderr
    assert hand.error_type is None, hand.stderr
    assert fixed.stdout == hand.stdout
