"""A function nobody in the file calls, given an object of the program's own class: `def train(gan,
loader, ...)` calling `gan.generate(z)` and `gan.critic(x)`. The class that defines every method the body
calls on a parameter is that parameter's class (one such class: several, or none, and the parameter stays
what its uses make it), so the training loop is analysed with the object's real methods: in the file,
in a module beside it, and through the methods' own loops."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest
from fixture_support import run_source_many

from gradguard.analysis import analyze, analyze_file
from gradguard.analysis.evidence import methods_called
from gradguard.analysis.program import Program

GAN = textwrap.dedent('''\
    """A small GAN whose networks live in one object with methods of its own."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class PairGAN(nn.Module):
        def __init__(self, z_dim=8, x_dim=16):
            super().__init__()
            self.z_dim = z_dim
            self.gen = nn.Sequential(nn.Linear(z_dim, 32), nn.ReLU(), nn.Linear(32, x_dim))
            self.disc = nn.Sequential(nn.Linear(x_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

        def generate(self, n):
            return self.gen(torch.randn(n, self.z_dim))

        def critic(self, x):
            return self.disc(x).squeeze(1)


    def train(gan, batches, opt_g, opt_d):
        for real in batches:
            fake = gan.generate(real.size(0))
            d_loss = F.softplus(gan.critic(fake)).mean() + F.softplus(-gan.critic(real)).mean()
            opt_d.zero_grad()
            d_loss.backward()
            opt_d.step()
            g_loss = F.softplus(-gan.critic(fake)).mean()
            opt_g.zero_grad()
            g_loss.backward()
            opt_g.step()
        return g_loss.item()
    ''')

MAIN = textwrap.dedent('''\


    if __name__ == "__main__":
        torch.manual_seed(0)
        model = PairGAN()
        data = [torch.randn(12, 16) for _ in range(3)]
        opt_g = torch.optim.Adam(model.gen.parameters(), lr=1e-3)
        opt_d = torch.optim.Adam(model.disc.parameters(), lr=1e-3)
        print(f"{train(model, data, opt_g, opt_d):.6f}")
    ''')

# The fake batch detached for the discriminator: what the code should have been.
CORRECT = GAN.replace("gan.critic(fake)).mean() + ", "gan.critic(fake.detach())).mean() + ")


def _rows(found: object) -> list[tuple[str, int]]:
    return [(d.code, d.span.start.row) for d in found]  # type: ignore[attr-defined]


def test_the_methods_a_body_calls_on_each_name() -> None:
    body = cst.parse_module(GAN).body[-1]
    called = methods_called(body)
    # The API's own methods (`zero_grad`, `step`, `mean`, `item`, `size`) say nothing about the class.
    assert called["gan"] == {"generate", "critic"}
    assert not {"opt_g", "opt_d", "real", "d_loss", "g_loss"} & called.keys()


def test_the_one_class_defining_those_methods_is_the_parameter_s_class() -> None:
    program = Program(cst.parse_module(GAN), frozenset())
    train = program.top_functions[0]
    params = list(train.node.params.params)  # type: ignore[attr-defined]
    found = program._classes_by_use(train, params)
    assert {name: cls.name for name, cls in found.items()} == {"gan": "PairGAN"}
    # Two classes defining both methods: which one is passed is not known.
    twin = GAN.replace("\n\ndef train(", "\n\nclass OtherGAN(PairGAN):\n    pass\n\n\ndef train(")
    program = Program(cst.parse_module(twin), frozenset())
    train = next(f for f in program.top_functions if f.node.name.value == "train")  # type: ignore[attr-defined]
    assert program._classes_by_use(train, list(train.node.params.params)) == {}  # type: ignore[attr-defined]


def test_a_fake_batch_reused_through_the_object_s_methods_is_found_in_a_train_function_nobody_calls() -> None:
    # Called by nobody: the fake batch went into the discriminator's loss undetached (GG005, with its fix).
    found = analyze(GAN)
    assert _rows(found) == [("GG005", 30)] and found[0].fix is not None
    # Called by a main that builds the object and its two optimizers: found at the same line. (As GG002,
    # without a fix: the optimizers' modules, `model.gen` and `model.disc`, are attributes of the object
    # the generator's method reads as `self.gen`; the entry, whose optimizers are unknown, says more.)
    assert [row for _, row in _rows(analyze(GAN + MAIN))] == [30]
    assert not analyze(CORRECT) and not analyze(CORRECT + MAIN)


def test_the_same_with_the_class_in_a_module_beside_the_script(tmp_path: Path) -> None:
    head, _, loop = GAN.partition("\n\ndef train(")
    (tmp_path / "gan.py").write_text(head + "\n", encoding="utf-8")
    script = "import torch\nimport torch.nn.functional as F\n\nfrom gan import PairGAN\n\n\ndef train(" + loop
    (tmp_path / "train.py").write_text(script, encoding="utf-8")
    found = analyze_file(script, path=str(tmp_path / "train.py")).diagnostics
    assert [d.code for d in found] == ["GG005"] and found[0].fix is not None
    assert found[0].span.start.row == script.splitlines().index("        g_loss.backward()") + 1
    assert found[0].fix.edits[0].content == "fake.detach()" and found[0].fix.edits[0].path is None


@pytest.mark.torch
def test_torch_fails_where_the_finding_is_and_not_in_the_correct_twin() -> None:
    runs = run_source_many({"gan_bug.py": GAN + MAIN, "gan_ok.py": CORRECT + MAIN})
    assert runs["gan_bug.py"].is_double_backward and runs["gan_bug.py"].row == 30
    assert runs["gan_ok.py"].error_type is None, runs["gan_ok.py"].stderr


def test_a_state_the_caller_carries_into_a_method_with_its_own_time_loop_is_found() -> None:
    from test_fix_shapes import FILTER

    # `train(model, windows, optimizer)` calls `model.initial(...)` and `model.observe(...)`: `Filter`.
    assert [d.code for d in analyze(FILTER)] == ["GG003"]


def test_classes_loaded_while_the_classes_are_matched_stop_nothing() -> None:
    # DeepRL's agents (`class A2CAgent(BaseAgent)`, `__init__(self, config)` calling `config.network_fn()`):
    # looking a method up through a base class of a project module loads the module the base is in,
    # and its classes join the program's while they are being matched ("dictionary changed size").
    program = Program(cst.parse_module(GAN), frozenset())
    train = program.top_functions[0]
    real = program.method_of

    def loading(cls, name):  # type: ignore[no-untyped-def]
        program.classes[cst.Pass()] = cls  # type: ignore[index]
        return real(cls, name)

    program.method_of = loading  # type: ignore[method-assign]
    found = program._classes_by_use(train, list(train.node.params.params))  # type: ignore[attr-defined]
    assert set(found) == {"gan"}
