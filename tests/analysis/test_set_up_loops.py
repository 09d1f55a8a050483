"""A set-up loop before the training loop does not multiply the training loop's runs.

rosinality/stylegan2-pytorch's `train()` collects, before its training loop, the names of the
generator's parameters that got no gradient (`for n, p in generator.named_parameters(): if p.grad is
None: none_grads.add(n)`). The paths out of that loop (the last parameter's gradient None or not)
differ only in a set of names, yet stayed apart: `named_parameters()` was a list of parameters, so
its names required grad, and a container of plain values was no plain value. The whole training
loop then ran once per path, and the file ran out of time before the R1 penalty's in-place error
(the discriminator stepped before `autograd.grad` through its graph) was reached.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

from gradguard.analysis import analyze, facts_for
from gradguard.analysis import interpreter as interp
from gradguard.analysis.state import inert
from gradguard.analysis.values import Kind, Value

_R1 = '''
import torch
import torch.nn as nn
from torch import autograd
import torch.nn.functional as F


class Generator(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.unused = nn.Linear(dim, dim)

    def forward(self, z):
        return self.body(z)


def d_r1_loss(real_pred, real_img):
    grad_real, = autograd.grad(outputs=real_pred.sum(), inputs=real_img, create_graph=True)
    return grad_real.pow(2).sum(1).mean()


def train(generator, discriminator, g_optim, d_optim, iters, d_reg_every=4, dim=8):
    none_grads = set()
    fake = generator(torch.randn(2, dim))
    fake.sum().backward()
    for n, p in generator.named_parameters():
        if p.grad is None:
            none_grads.add(n)

    for i in range(iters):
        real_img = torch.randn(4, dim)
        fake_img = generator(torch.randn(4, dim))
        fake_pred = discriminator(fake_img.detach())
        d_regularize = i % d_reg_every == 0
        if d_regularize:
            real_img.requires_grad = True
        real_pred = discriminator(real_img)
        d_loss = F.softplus(-real_pred).mean() + F.softplus(fake_pred).mean()
        discriminator.zero_grad()
        d_loss.backward(retain_graph=d_regularize)
        STEP_BEFORE
        if d_regularize:
            r1_loss = d_r1_loss(real_pred, real_img)
            discriminator.zero_grad()
            (10 * r1_loss).backward()
            d_optim.step()
        STEP_AFTER
        g_loss = F.softplus(-discriminator(generator(torch.randn(4, dim)))).mean()
        generator.zero_grad()
        g_loss.backward()
        for n, p in generator.named_parameters():
            if n in none_grads:
                p.grad = None
        g_optim.step()
        if i % 10 == 0:
            print(i, d_loss.item(), g_loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    generator, discriminator = Generator(8), nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
    g_optim = torch.optim.Adam(generator.parameters(), lr=1e-3)
    d_optim = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
    train(generator, discriminator, g_optim, d_optim, 9)
    print("ok")
'''

# The R1 penalty's graph goes through the discriminator's weights the step before it changed.
_STEP_FIRST = _R1.replace("STEP_BEFORE", "d_optim.step()").replace("        STEP_AFTER\n", "")
# The fix: the plain step after the penalty's.
_STEP_LAST = _R1.replace("        STEP_BEFORE\n", "").replace(
    "(10 * r1_loss).backward()\n            d_optim.step()", "(10 * r1_loss).backward()").replace(
    "STEP_AFTER", "d_optim.step()")


def _line_of(source: str, text: str) -> int:
    return next(n for n, line in enumerate(source.splitlines(), 1) if text in line)


def test_the_training_loop_runs_once_whatever_the_set_up_loop_found(monkeypatch: pytest.MonkeyPatch) -> None:
    runs: list[int] = []
    original = interp.Interpreter.run_loop

    def run_loop(self: interp.Interpreter, loop: cst.For | cst.While, *args: object, **kwargs: object) -> list:
        if isinstance(loop, cst.For) and isinstance(loop.iter, cst.Call) \
                and isinstance(loop.iter.func, cst.Name) and loop.iter.func.value == "range":
            runs.append(1)
        return original(self, loop, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(interp.Interpreter, "run_loop", run_loop)
    facts_for(_STEP_FIRST)
    # Once as the module's `train(...)` call, once as `train` analysed on its own.
    assert len(runs) == 2
    found = [(d.span.start.row, d.code) for d in analyze(_STEP_FIRST)]
    assert (_line_of(_STEP_FIRST, "grad_real, = autograd.grad"), "GG011") in found
    assert analyze(_STEP_LAST) == ()


def test_names_of_named_parameters_hold_no_graph_and_lists_of_them_are_plain() -> None:
    names = Value(Kind.LIST, item_shape=(), items="")
    assert inert(names) and inert(Value(Kind.TUPLE, elems=(Value(Kind.SCALAR), Value(Kind.NONE))))
    assert not inert(Value(Kind.LIST, items="tensor"))
    assert not inert(Value(Kind.LIST, grad=True, label="params:generator"))
    assert not inert(Value(Kind.TUPLE, elems=(Value(Kind.TENSOR, frozenset({6})),)))


def test_the_programs_behave_under_torch(tmp_path: Path) -> None:
    (tmp_path / "step_first.py").write_text(_STEP_FIRST, encoding="utf-8")
    (tmp_path / "step_last.py").write_text(_STEP_LAST, encoding="utf-8")
    buggy = subprocess.run([sys.executable, "step_first.py"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=300)
    assert buggy.returncode != 0 and "modified by an inplace operation" in buggy.stderr
    fixed = subprocess.run([sys.executable, "step_last.py"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=300)
    assert fixed.returncode == 0 and fixed.stdout.strip().endswith("ok")
